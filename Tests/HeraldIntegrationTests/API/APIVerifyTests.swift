import Foundation
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldRuntime
import HeraldStubs
import NIOHTTP1
import Testing

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
            // The create's answer is herald-sms's decision: on the loaded machine of the parallel
            // suite it came later than the default 3 s (twice on 2026-12-07, the refusal recorded
            // 2 s after the create), and the answer was the undecided 201.
            let api = try await APIProcess(harness, environment: ["HERALD_API_DECISION_WAIT_MS": "15000"])
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

    /// Services are listed a page at a time with no Service left out between pages: page 1 of
    /// two starts where page 0 of two ends (Services other tests create come after, oldest first).
    @Test func servicePagesFollowOneAnother() async throws {
        try await withHarness { harness in
            let api = try await APIProcess(harness)
            let form = "application/x-www-form-urlencoded"
            for n in 0..<5 {
                let created = try await api.call(.POST, "/v2/Services", body: "FriendlyName=Page\(n)", contentType: form)
                #expect(created.status == 201, "\(created)")
            }
            func sids(_ query: String) async throws -> (sids: [String], next: Any?) {
                let page = try await api.call(.GET, "/v2/Services?\(query)")
                #expect(page.status == 200, "\(page)")
                let services = page.json["services"] as? [[String: Any]] ?? []
                let meta = page.json["meta"] as? [String: Any] ?? [:]
                return (services.compactMap { $0["sid"] as? String }, meta["next_page_url"])
            }
            let four = try await sids("PageSize=4&Page=0")
            let first = try await sids("PageSize=2&Page=0")
            let second = try await sids("PageSize=2&Page=1")
            #expect(four.sids.count == 4, "\(four)")
            #expect(first.sids + second.sids == four.sids, "page 0: \(first.sids), page 1: \(second.sids), both at once: \(four.sids)")
            #expect(first.next is String && second.next is String, "more Services follow: \(first), \(second)")
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

    /// A code belongs to its service: a second service's verification of the same number gets an
    /// SMS of its own (not the first's code reused), and neither service's code approves the other's.
    @Test func aServiceCannotUseAnotherServicesSMSCode() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start()
            let api = try await APIProcess(harness)
            let phone = harness.phone(3)
            let (a, b) = (try await Self.service(api, "A"), try await Self.service(api, "B"))
            let to = "To=\(phone.replacingOccurrences(of: "+", with: "%2B"))"
            let codes = try await Self.codes(api, services: [a, b], create: "\(to)&Channel=sms") { count in
                try await eventually("SMS \(count) delivered") { sms.delivered().filter { $0.to == phone }.count == count }
                return try #require(sms.code(to: phone))
            }
            try await Self.expectIsolated(api, services: [a, b], codes: codes.map(\.code), to: to)
            // The record tells whose code it is (what `heraldctl verify show-sms` prints).
            for (service, sent) in zip([a, b], codes) {
                let record = try await api.call(.GET, "/v1/sms/verifications/\(sent.attempt)")
                #expect(record.status == 200 && record.json["tenant"] as? String == service, "\(record)")
            }
        }
    }

    /// The same for email codes, which were found by address and purpose: service A's code
    /// approved service B's verification, and A's own then read 404.
    @Test func aServiceCannotUseAnotherServicesEmailCode() async throws {
        try await withHarness { harness in
            let email = try await EmailFixture(harness)
            _ = try await email.start()
            let api = try await APIProcess(harness)
            let address = email.address(4)
            let (a, b) = (try await Self.service(api, "A"), try await Self.service(api, "B"))
            let to = "To=\(address)"
            let codes = try await Self.codes(api, services: [a, b], create: "\(to)&Channel=email") { count in
                try await eventually("email \(count) received") { email.received(to: address).count == count }
                // The digits on the text part's own line.
                let lines = try #require(email.received(to: address).last).text.split(whereSeparator: \.isNewline)
                return try #require(lines.map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.count == 6 && $0.allSatisfy(\.isNumber) })
            }
            try await Self.expectIsolated(api, services: [a, b], codes: codes.map(\.code), to: to)
        }
    }

    private static let form = "application/x-www-form-urlencoded"

    private static func service(_ api: APIProcess, _ name: String) async throws -> String {
        let service = try await api.call(.POST, "/v2/Services", body: "FriendlyName=\(name)", contentType: form)
        return try #require(service.json["sid"] as? String, "\(service)")
    }

    /// Creates a verification in each service in turn; each must send a message of its own
    /// (`received(n)` waits for the n-th and reads its code). With each code, the sid of the
    /// send attempt that carried it (the worker's verification id).
    private static func codes(_ api: APIProcess, services: [String], create: String,
                              received: (Int) async throws -> String) async throws -> [(code: String, attempt: String)] {
        var codes: [(code: String, attempt: String)] = []
        for (index, service) in services.enumerated() {
            let started = try await api.call(.POST, "/v2/Services/\(service)/Verifications", body: create, contentType: form)
            #expect(started.status == 201 && started.json["status"] as? String == "pending", "\(started)")
            let attempts = started.json["send_code_attempts"] as? [[String: Any]]
            let attempt = try #require(attempts?.last?["attempt_sid"] as? String, "\(started)")
            codes.append((try await received(index + 1), attempt))
        }
        return codes
    }

    /// Each service's code is wrong for the other (still pending), and right for its own.
    private static func expectIsolated(_ api: APIProcess, services: [String], codes: [String], to: String) async throws {
        guard codes[0] != codes[1] else { return }  // one chance in a million: nothing to tell apart
        for (service, code) in [(services[1], codes[0]), (services[0], codes[1])] {
            let crossed = try await api.call(.POST, "/v2/Services/\(service)/VerificationCheck", body: "\(to)&Code=\(code)", contentType: form)
            #expect(crossed.status == 200 && crossed.json["status"] as? String == "pending", "another service's code: \(crossed)")
        }
        for (service, code) in zip(services, codes) {
            let own = try await api.call(.POST, "/v2/Services/\(service)/VerificationCheck", body: "\(to)&Code=\(code)", contentType: form)
            #expect(own.status == 200 && own.json["status"] as? String == "approved", "its own code: \(own)")
        }
    }
}
