import Foundation
import HeraldStubs
import NIOHTTP1
import Testing
@testable import HeraldEmail
@testable import HeraldRuntime
@testable import HeraldSMS

/// The Twilio Verify routes' states that Twilio's own library cannot bring about from here
/// (tests/api/twilio_verify_acceptance.py has the rest): a verification no SMS of which was sent.
@Suite(.needsServers) struct APIVerifyTests {
    /// herald-sms refuses the number (its region policy denies DE; herald-api's allows it): the
    /// create is answered with the refusal (Twilio's 60200 naming To), nothing is pending, and a
    /// check is Twilio's 20404.
    @Test func aVerificationWhoseSMSWasRefusedIsFailed() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start { $0.sms.regions = .init(mode: .deny, regions: ["DE"]) }
            let api = try await APIProcess(harness)
            let form = "application/x-www-form-urlencoded"
            let service = try await api.call(.POST, "/v2/Services", body: "FriendlyName=Refused", contentType: form)
            let serviceSid = try #require(service.json["sid"] as? String, "\(service)")
            let to = harness.phone(1).replacingOccurrences(of: "+", with: "%2B")
            let started = try await api.call(.POST, "/v2/Services/\(serviceSid)/Verifications", body: "To=\(to)&Channel=sms", contentType: form)
            #expect(started.status == 400 && started.json["code"] as? Int == 60200, "\(started)")
            #expect((started.json["message"] as? String)?.contains("region_not_allowed:DE") == true, "\(started)")
            let check = try await api.call(.POST, "/v2/Services/\(serviceSid)/VerificationCheck", body: "To=\(to)&Code=123456", contentType: form)
            #expect(check.status == 404 && check.json["code"] as? Int == 20404, "\(check)")
            // Refused again, at create time: nothing was sent.
            let again = try await api.call(.POST, "/v2/Services/\(serviceSid)/Verifications", body: "To=\(to)&Channel=sms", contentType: form)
            #expect(again.status == 400 && again.json["code"] as? Int == 60200, "\(again)")
            #expect(sms.delivered().isEmpty)
        }
    }

    /// A check's `To` is read as create reads it: another spelling of the number names the same
    /// verification.
    @Test func aCheckNamesTheVerificationByAnySpellingOfItsNumber() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start()
            let api = try await APIProcess(harness)
            let form = "application/x-www-form-urlencoded"
            let service = try await api.call(.POST, "/v2/Services", body: "FriendlyName=Spelling", contentType: form)
            let serviceSid = try #require(service.json["sid"] as? String, "\(service)")
            let phone = harness.phone(2)
            let started = try await api.call(.POST, "/v2/Services/\(serviceSid)/Verifications",
                                             body: "To=\(phone.replacingOccurrences(of: "+", with: "%2B"))&Channel=sms", contentType: form)
            #expect(started.status == 201 && started.json["status"] as? String == "pending", "\(started)")
            try await eventually("the code delivered") { sms.code(to: phone) != nil }
            let code = try #require(sms.code(to: phone))
            // "+49 178 0135-5002": spaces and a dash, form-encoded.
            let digits = phone.dropFirst()
            let spelled = "%2B\(digits.prefix(2))+\(digits.dropFirst(2).prefix(3))+\(digits.dropFirst(5).prefix(4))-\(digits.dropFirst(9))"
            let check = try await api.call(.POST, "/v2/Services/\(serviceSid)/VerificationCheck", body: "To=\(spelled)&Code=\(code)", contentType: form)
            #expect(check.status == 200 && check.json["status"] as? String == "approved", "\(check)")
        }
    }

    /// A first send refused at create time leaves nothing pending, on the email channel too: the
    /// create is 20429, and the next create makes a new verification, not a resend.
    @Test func anEmailVerificationWhoseFirstSendWasRefusedIsNotPending() async throws {
        try await withHarness { harness in
            let email = try await EmailFixture(harness)
            _ = try await email.start { $0.email.limits.address = RateLimit(max: 0, windowSeconds: 3600) }
            let api = try await APIProcess(harness)
            let form = "application/x-www-form-urlencoded"
            let service = try await api.call(.POST, "/v2/Services", body: "FriendlyName=Refused", contentType: form)
            let serviceSid = try #require(service.json["sid"] as? String, "\(service)")
            let to = email.address(1)
            let refused = try await api.call(.POST, "/v2/Services/\(serviceSid)/Verifications", body: "To=\(to)&Channel=email", contentType: form)
            #expect(refused.status == 429 && refused.json["code"] as? Int == 20429, "\(refused)")
            #expect((refused.json["message"] as? String)?.contains("rate_limited:email_address") == true, "\(refused)")
            let check = try await api.call(.POST, "/v2/Services/\(serviceSid)/VerificationCheck", body: "To=\(to)&Code=123456", contentType: form)
            #expect(check.status == 404 && check.json["code"] as? Int == 20404, "nothing pending: \(check)")
            #expect(email.received(to: to).isEmpty)
        }
    }
}
