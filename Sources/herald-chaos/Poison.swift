import AMQP
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldWire

/// Malformed messages of every sort the issue names, on every kind's routing key: random
/// bytes, truncated JSON, invalid UTF-8, wrong types, oversize bodies, an unknown job type,
/// valid JSON that fails validation, no message id, a JSON array, an unknown version.
enum Poison {
    static let sorts = ["random-bytes", "truncated", "invalid-utf8", "wrong-types", "oversize", "unknown-type",
                        "fails-validation", "no-message-id", "json-array", "unknown-version"]

    struct Message: Sendable {
        var body: [UInt8]
        var properties: AMQPProperties
        var routingKey: String
    }

    static func message(_ n: Int, run: String, maxBytes: Int) -> Message {
        let job: any HeraldJob.Type = [SMSVerificationJob.self, EmailActionJob.self, PushVerificationJob.self, CleanupRunJob.self][n % 4]
        var properties = JobEnvelope(messageID: "p\(run)-\(n)", typeName: job.typeName).properties()
        let valid: String = switch job {
        case is SMSVerificationJob.Type: #"{"version":1,"verification_id":"p-\#(n)","phone_number":"+4915112345678","purpose":"sign_in"}"#
        case is EmailActionJob.Type: #"{"version":1,"request_id":"p-\#(n)","email":"a@example.com","mode":"sign_in","action_code_settings":{"url":"https://app.example.com/","handle_code_in_app":true}}"#
        case is PushVerificationJob.Type: #"{"version":1,"receipt":"p-\#(n)","device_token":"abcd","platform":"apns","environment":"sandbox","app_id":"com.example.app"}"#
        default: #"{"version":1,"run_id":"p-\#(n)"}"#
        }
        let body: [UInt8]
        switch sorts[(n / 4) % sorts.count] {
        case "random-bytes": body = (0..<Int.random(in: 1...512)).map { _ in UInt8.random(in: 0...255) }
        case "truncated": body = Array(valid.utf8.prefix(Int.random(in: 1..<valid.utf8.count)))
        case "invalid-utf8": body = Array(valid.utf8.prefix(20)) + [0xC3, 0x28, 0xFF] + Array(valid.utf8.dropFirst(20))
        case "wrong-types": body = Array(valid.replacingOccurrences(of: #""version":1,"#, with: #""version":1,"x":[],"#).replacingOccurrences(of: #""p-\#(n)""#, with: "\(n)").utf8)
        case "oversize": body = Array(("{\"version\":1,\"pad\":\"" + String(repeating: "x", count: maxBytes) + "\"}").utf8)
        case "unknown-type":
            body = Array(valid.utf8)
            properties.type = "sms.teleport.v1"
        case "fails-validation":
            body = Array(valid.replacingOccurrences(of: "+4915112345678", with: "12345").replacingOccurrences(of: "a@example.com", with: "not-an-address")
                .replacingOccurrences(of: #""platform":"apns""#, with: #""platform":"carrier-pigeon""#).replacingOccurrences(of: #""run_id":"p-\#(n)""#, with: #""run_id":"""#).utf8)
        case "no-message-id":
            body = Array(valid.utf8)
            properties.messageID = nil
        case "json-array": body = Array("[\(valid)]".utf8)
        default: body = Array(valid.replacingOccurrences(of: #""version":1"#, with: #""version":99"#).utf8)
        }
        return Message(body: body, properties: properties, routingKey: job.name)
    }
}
