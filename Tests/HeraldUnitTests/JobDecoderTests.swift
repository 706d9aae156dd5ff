import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

@Suite struct JobDecoderTests {
    let decoder = JobDecoder<SMSVerificationJob>(maxBytes: 1024)

    func properties(type: String? = SMSVerificationJob.typeName, id: String? = "m-1") -> AMQPProperties {
        var p = AMQPProperties()
        p.type = type
        p.messageID = id
        p.contentType = "application/json"
        return p
    }

    func reason(_ body: String, _ properties: AMQPProperties? = nil) -> String? {
        reason(Array(body.utf8), properties)
    }

    func reason(_ body: [UInt8], _ properties: AMQPProperties? = nil) -> String? {
        if case .failure(let error) = decoder.decode(body: body, properties: properties ?? self.properties()) { return error.reason }
        return nil
    }

    let valid = #"{"version":1,"verification_id":"v-1","phone_number":"+4915112345678","purpose":"sign_in","extra":"ignored"}"#

    @Test func aValidJobDecodesAndIgnoresUnknownFields() throws {
        let result = decoder.decode(body: Array(valid.utf8), properties: properties())
        let (envelope, job) = try result.get()
        #expect(envelope.messageID == "m-1")
        #expect(job.phoneNumber == "+4915112345678")
        #expect(job.purpose == .signIn)
        #expect(job.forceResend == nil)
    }

    @Test func everyKindOfBadInputHasItsReason() {
        #expect(reason("not json at all")?.contains("JSON object") == true)
        #expect(reason("{\"version\":1,") == "body is not valid JSON")
        #expect(reason([0x7B, 0xFF, 0xFE, 0x7D])?.contains("UTF-8") == true)
        #expect(reason(String(repeating: " ", count: 2000))?.contains("exceeds runner.max_message_bytes") == true)
        #expect(reason(#"{"version":1,"phone_number":"+4915112345678","purpose":"sign_in"}"#) == "missing required field 'verification_id'")
        #expect(reason(#"{"version":1,"verification_id":5,"phone_number":"+4915112345678","purpose":"sign_in"}"#)?.contains("'verification_id' has the wrong type") == true)
        #expect(reason(#"{"version":1,"verification_id":"v","phone_number":"+4915112345678","purpose":"lunch"}"#) == "field 'purpose' has an invalid value")
        #expect(reason(#"{"version":2,"verification_id":"v","phone_number":"+4915112345678","purpose":"sign_in"}"#) == "field 'version' must be 1")
        #expect(reason(#"{"version":1,"verification_id":"v","phone_number":"015112345678","purpose":"sign_in"}"#)?.contains("E.164") == true)
        #expect(reason(valid, properties(type: "email.action.v1"))?.contains("unknown job type") == true)
        #expect(reason(valid, properties(type: "sms.verification.v9"))?.contains("unsupported version") == true)
        #expect(reason(valid, properties(type: nil))?.contains("type property is missing") == true)
        #expect(reason(valid, properties(id: nil))?.contains("message_id") == true)
        var xml = properties()
        xml.contentType = "application/xml"
        #expect(reason(valid, xml)?.contains("content_type") == true)
    }

    @Test func aBodyDrainedUnreadIsRefusedWithTheSizeItsHeaderDeclared() {
        let declared = 100 * 1_048_576
        guard case .failure(let error) = decoder.decode(body: [], bodySize: declared, properties: properties()) else {
            Issue.record("an oversize body was accepted")
            return
        }
        #expect(error.reason == "body of \(declared) bytes exceeds runner.max_message_bytes (\(decoder.maxBytes))")
    }

    @Test func reasonsNeverQuoteFieldValues() {
        let secretish = #"{"version":1,"verification_id":"v","phone_number":"+12","purpose":"sign_in"}"#
        let text = reason(secretish) ?? ""
        #expect(!text.contains("+12"))
        #expect(!text.isEmpty)
    }

    @Test func otherJobsValidate() throws {
        let email = EmailActionJob(requestID: "r", email: "a@example.com", mode: .signIn, actionCodeSettings: .init(url: "https://x.example/", handleCodeInApp: false))
        #expect(throws: JobValidationError.self) { try email.validate() }
        let push = PushVerificationJob(receipt: "r", deviceToken: "zz", platform: .apns, environment: .sandbox, appID: "com.x")
        #expect(throws: JobValidationError.self) { try push.validate() }
        try PushVerificationJob(receipt: "r", deviceToken: "abcd", platform: .apns, environment: .sandbox, appID: "com.x").validate()
        #expect(throws: JobValidationError.self) { try EmailActionJob(requestID: "r", email: "a@b", mode: .verifyEmail, actionCodeSettings: .init(url: "https://x.example/")).validate() }
    }
}
