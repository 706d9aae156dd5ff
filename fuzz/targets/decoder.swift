import AMQP
import Foundation

// libFuzzer target: the job decoder of every job type, on arbitrary bodies and properties.
// Input: byte 0 picks the job type, byte 1 the shape of the AMQP properties, the rest is the
// body. Checked besides "no crash": a decoded job survives encode → decode unchanged and still
// validates; a rejection has a short, printable reason (reasons travel in AMQP headers and logs,
// so they must not echo raw input).

func check<J: HeraldJob & Equatable>(_ type: J.Type, body: [UInt8], properties: AMQPProperties) {
    switch JobDecoder<J>(maxBytes: 64 * 1024).decode(body: body, properties: properties) {
    case .success(let (envelope, job)):
        precondition(envelope.typeName == J.typeName, "decoded a job under the wrong type name")
        let again = try! JSONDecoder().decode(J.self, from: JSONEncoder().encode(job))
        precondition(again == job, "encode → decode changed the job")
        do { try again.validate() } catch { preconditionFailure("a decoded job no longer validates: \(error)") }
    case .failure(let error):
        precondition(!error.reason.isEmpty, "empty reason")
        precondition(error.reason.utf8.count <= 600, "reason of \(error.reason.utf8.count) bytes")
        precondition(!error.reason.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character in a reason")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJobDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let body = Array(bytes[2...])
    let types: [any HeraldJob.Type] = [SMSVerificationJob.self, EmailActionJob.self, PushVerificationJob.self, CleanupRunJob.self]
    let type = types[Int(bytes[0]) % types.count]
    var properties = AMQPProperties(contentType: "application/json", messageID: "fuzz-1", type: type.typeName)
    let shape = bytes[1]
    if shape & 0x01 != 0 { properties.messageID = nil }
    if shape & 0x02 != 0 { properties.type = String(decoding: body.prefix(24), as: UTF8.self) }
    if shape & 0x04 != 0 { properties.contentType = "text/plain" }
    if shape & 0x08 != 0 { properties.messageID = String(decoding: body.prefix(40), as: UTF8.self) }
    if shape & 0x10 != 0 { properties.type = type.name + ".v" + String(shape) }
    switch type {
    case is SMSVerificationJob.Type: check(SMSVerificationJob.self, body: body, properties: properties)
    case is EmailActionJob.Type: check(EmailActionJob.self, body: body, properties: properties)
    case is PushVerificationJob.Type: check(PushVerificationJob.self, body: body, properties: properties)
    default: check(CleanupRunJob.self, body: body, properties: properties)
    }
    return 0
}
