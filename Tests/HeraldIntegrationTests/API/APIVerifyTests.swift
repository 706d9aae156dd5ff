import Foundation
import HeraldStubs
import NIOHTTP1
import Testing
@testable import HeraldRuntime
@testable import HeraldSMS

/// The Twilio Verify routes' states that Twilio's own library cannot bring about from here
/// (tests/api/twilio_verify_acceptance.py has the rest): a verification no SMS of which was sent.
@Suite(.needsServers) struct APIVerifyTests {
    /// herald-sms refuses the number (its region policy denies DE; herald-api's allows it):
    /// the verification reads `failed`, and a check of it is Twilio's 20404.
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
            #expect(started.status == 201 && started.json["status"] as? String == "pending", "\(started)")
            let sid = try #require(started.json["sid"] as? String)
            try await eventually("herald-sms refused the send") {
                try await api.call(.GET, "/v2/Services/\(serviceSid)/Verifications/\(sid)").json["status"] as? String == "failed"
            }
            let check = try await api.call(.POST, "/v2/Services/\(serviceSid)/VerificationCheck", body: "VerificationSid=\(sid)&Code=123456", contentType: form)
            #expect(check.status == 404 && check.json["code"] as? Int == 20404, "\(check)")
            // Failed is final: a new send to the number is a new verification.
            let again = try await api.call(.POST, "/v2/Services/\(serviceSid)/Verifications", body: "To=\(to)&Channel=sms", contentType: form)
            #expect(again.status == 201 && again.json["sid"] as? String != sid, "\(again)")
        }
    }
}
