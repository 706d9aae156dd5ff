import Foundation
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
import HeraldStubs
import NIOHTTP1
import Testing

/// The door decides (issue 45): a start on the real `herald-api` is answered with herald-sms's
/// decision (in-process, dev outbox), and a refused start sends nothing.
@Suite(.needsServers) struct APIDecisionTests {
    /// One front-API server (a server key) starting for 1,000 end users names each one's IP:
    /// none is refused for the IP. Then 25 starts naming one IP: cut at `sms.limits.ip` (20),
    /// the rest answered 429 with `Retry-After`, and nothing sent past the limit.
    @Test func aServerKeysStartsAreLimitedPerEndUserIPNotPerServer() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start {
                $0.sms.prefixLimit = .init(max: 100_000, windowSeconds: 3600)
                $0.sms.ipLimit = .init(max: 20, windowSeconds: 3600)
            }
            let api = try await APIProcess(harness)
            let server = try await api.makeKey("front", scopes: [.sms], server: true)
            // Addresses of this test alone (per-IP counters are shared by every test): one /64 of
            // documentation space each (an IPv6 address counts by its /64).
            let net = String(UInt16.random(in: 1...UInt16.max), radix: 16)
            var answers: [Int: Int] = [:]
            for n in 0..<1000 {
                let ip = "2001:db8:\(net):\(String(n, radix: 16))::1"
                let answer = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": "\(harness.namespace)-u\(n)",
                                                                                      "phone_number": harness.phone(n), "client_ip": ip], auth: .basic(server))
                answers[answer.status, default: 0] += 1
                // 202: herald-sms had not decided within `api.decision_wait_ms` (a loaded machine);
                // the start is still going, not refused. (The decision itself: the other tests here.)
                if answer.status != 200 && answer.status != 202 { Issue.record("start \(n): \(answer)") ; break }
            }
            #expect(answers[200, default: 0] + answers[202, default: 0] == 1000, "\(answers)")

            var statuses: [Int] = []
            for n in 0..<25 {
                let id = "\(harness.namespace)-one\(n)"
                let answer = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": id, "phone_number": harness.phone(n),
                                                                                      "client_ip": "2001:db8:\(net):ffff::7", "force_resend": true], auth: .basic(server))
                statuses.append(answer.status)
                if answer.status == 429 {
                    #expect(answer.error["reason"] as? String == "rate_limited:ip", "\(answer)")
                    #expect(answer.headers.first(name: "Retry-After") == "360" && answer.error["retry_after_seconds"] as? Int == 360, "\(answer)")
                    #expect(answer.json["verification_id"] as? String == id)
                }
            }
            #expect(statuses == Array(repeating: 200, count: 20) + Array(repeating: 429, count: 5), "\(statuses)")
            try await eventually(timeout: .seconds(60), "the 1,020 SMS delivered") { sms.delivered().count >= 1020 }
            try await Task.sleep(for: .milliseconds(500))
            let limited = Set((20..<25).map { "\(harness.namespace)-one\($0)" })
            #expect(sms.delivered().count == 1020 && !sms.delivered().contains { limited.contains($0.verificationID) })
        }
    }

    /// Only a server key names the end user's IP; another key's `client_ip` is refused naming
    /// the field. A code sent moments ago answers a second start `reused`; a retried id is
    /// answered from its record.
    @Test func clientIPNeedsAServerKeyAndAReusedCodeIsAnsweredSo() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start()
            let api = try await APIProcess(harness)
            let phone = harness.phone(1)
            let named = try await api.call(.POST, "/v1/sms/verifications", json: ["phone_number": phone, "client_ip": "192.0.2.1"])
            #expect(named.status == 400 && named.error["field"] as? String == "client_ip", "\(named)")
            let first = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": "\(harness.namespace)-r1", "phone_number": phone])
            #expect(first.status == 200 && first.json["status"] as? String == "sending", "\(first)")
            try await eventually("the code sent") { try await harness.ledger("\(harness.namespace)-r1")?.0 == "completed" }
            let second = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": "\(harness.namespace)-r2", "phone_number": phone])
            #expect(second.status == 200 && second.json["status"] as? String == "reused", "\(second)")
            #expect(second.json["resend_interval_seconds"] as? Int == SMSConfiguration().resendIntervalSeconds, "\(second)")
            let retried = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": "\(harness.namespace)-r2", "phone_number": phone])
            #expect(retried.status == 200 && retried.json["status"] as? String == "reused", "\(retried)")
            #expect(sms.delivered().filter { $0.to == phone }.count == 1)
        }
    }

    /// A code's budget of paid sends (`sms.fallback.max_paid_sends`, 2): its first send and one
    /// forced resend go out; the third start for the pending code is refused at the door (429,
    /// `rate_limited:paid_sends`, retry after the code's TTL) and sends nothing; the second code
    /// still verifies.
    @Test func aCodePastItsBudgetOfPaidSendsIsRefusedAtTheStart() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start { $0.sms.fallback.maxPaidSends = 2 }
            let api = try await APIProcess(harness)
            let phone = harness.phone(2)
            var answers: [APIProcess.Answer] = []
            for n in 1...3 {
                answers.append(try await api.call(.POST, "/v1/sms/verifications",
                                                  json: ["verification_id": "\(harness.namespace)-b\(n)", "phone_number": phone, "force_resend": true]))
                if n < 3 { try await eventually("send \(n) recorded") { sms.delivered().filter { $0.to == phone }.count == n } }
            }
            #expect(answers.prefix(2).allSatisfy { $0.status == 200 && $0.json["status"] as? String == "sending" }, "\(answers)")
            let refused = answers[2]
            #expect(refused.status == 429 && refused.error["reason"] as? String == "rate_limited:paid_sends", "\(refused)")
            let ttl = SMSConfiguration().codeTTLSeconds
            #expect(refused.headers.first(name: "Retry-After") == "\(ttl)", "\(refused)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(sms.delivered().filter { $0.to == phone }.count == 2)
            let code = try #require(sms.code(to: phone))
            #expect(try await sms.verify("\(harness.namespace)-b2", code) == .verified(phoneNumber: phone, purpose: .signIn))
        }
    }

    /// A region herald-sms does not send to is refused at the start (422 naming the rule and the
    /// field), and nothing is sent.
    @Test func aPolicysRefusalIsAnsweredAtTheStart() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start { $0.sms.regions = .init(mode: .deny, regions: ["DE"]) }
            let api = try await APIProcess(harness)
            let refused = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": "\(harness.namespace)-p1", "phone_number": harness.phone(1)])
            #expect(refused.status == 422 && refused.error["code"] as? String == "refused", "\(refused)")
            #expect(refused.error["reason"] as? String == "region_not_allowed:DE" && refused.error["field"] as? String == "phone_number", "\(refused)")
            #expect(sms.delivered().isEmpty)
        }
    }
}
