import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// The fraud guard as friction, not a wall (issue 46, docs/abuse.md): a burst is judged inside
/// itself, and during a pause a request that proves more (its app verification accepted) gets its
/// code. Each test in a Dutch prefix of its own, the region's floor out of reach (France, Jamaica
/// and Britain are FraudGuardTests', which pause and clear whole regions).
@Suite(.needsServers, .serialized) struct FraudGuardFrictionTests {
    /// A Dutch mobile range of eight digits after `+` (a prefix of `prefix_digits` 8): `+3161`
    /// and four random digits, then three digits per number.
    static func dutchRange() -> String { "+3161" + String(format: "%04d", Int.random(in: 0..<10_000)) }

    /// The guard of these tests: a prefix (8 digits after `+`) pauses at `floor` sends with less
    /// than half verified.
    static func guarded(_ configuration: inout HeraldConfiguration, floor: Int) {
        configuration.sms.fraudGuard.enabled = true
        configuration.sms.fraudGuard.prefixFloor = floor
        configuration.sms.fraudGuard.regionFloor = 1000
        configuration.sms.fraudGuard.prefixDigits = 8
        configuration.sms.fraudGuard.minConversion = 0.5
    }

    /// Twelve requests enqueued at once, none waiting for another: the floor's worth is sent,
    /// the rest refused by the pause their own burst made (before, each group went out in full:
    /// its sends are counted only once recorded).
    @Test func aBurstIsJudgedInsideItself() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start { Self.guarded(&$0, floor: 5) }
            let range = Self.dutchRange()
            let jobs = (0..<12).map { SMSVerificationJob(verificationID: "\(harness.namespace)-bu\($0)", phoneNumber: range + String(format: "%03d", $0),
                                                         locale: "en") }
            var ids: [String] = []
            for job in jobs { ids.append(try await harness.enqueue(job)) }
            try await eventually(timeout: .seconds(30), "all decided") {
                let statuses = try await harness.statuses(ids)
                return ids.allSatisfy { ["completed", "rejected"].contains(statuses[$0] ?? "") }
            }
            var states: [String: Int] = [:]
            for job in jobs {
                let verification = try #require(try await sms.verification(job.verificationID))
                states[verification.state, default: 0] += 1
                if verification.state == "refused" { #expect(verification.reason == "fraud_guard:prefix:\(range)") }
            }
            #expect(states == ["sent": 5, "refused": 7], "\(states)")
            #expect(sms.delivered().filter { $0.to.hasPrefix(range) }.count == 5)
            try await worker.stop()
        }
    }

    /// A prefix whose users verified 120 codes in the day before the window (5 in a usual hour):
    /// with a configured floor of 4 and `usual_multiple` 3, it is paused at 15 unverified sends,
    /// not 4; the pause records them.
    @Test func aScopeWithUsersOfItsOwnIsPausedAtAMultipleOfTheirTraffic() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start {
                Self.guarded(&$0, floor: 4)
                $0.sms.fraudGuard.usualMultiple = 3
                $0.sms.resendIntervalSeconds = 0
            }
            let range = Self.dutchRange()
            // 24 hours of 5 verified codes each, all in the day before the window (90 minutes to
            // 24.5 hours ago): 120, 5 in a usual hour.
            try await harness.database.query("""
                INSERT INTO herald.sms_fraud_counts (scope, key, minute, sent, verified)
                SELECT 'prefix', \(range), date_trunc('minute', now()) - make_interval(mins => 60 * h + 90), 6, 5 FROM generate_series(0, 23) AS h
                """, logger: harness.logger)
            var states: [String] = []
            for n in 0..<17 {
                let job = SMSVerificationJob(verificationID: "\(harness.namespace)-us\(n)", phoneNumber: range + String(format: "%03d", n), locale: "en")
                states.append(try await FraudGuardTests.run(job, harness, sms).0)
            }
            #expect(states.prefix(15).allSatisfy { $0 == "sent" } && states.dropFirst(15).allSatisfy { $0 == "refused" }, "\(states)")
            let row = try #require(try await FraudGuardTests.pauseRow(range, harness))
            #expect(row.state == "paused", "\(row)")
            try await worker.stop()
        }
    }

    /// A paused prefix: a new number is refused, and the same request with an accepted push
    /// receipt (app verification, `optional`) gets its code; the pause stays.
    @Test func aRequestThatProvesMorePassesAPause() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start {
                Self.guarded(&$0, floor: 2)
                $0.sms.appVerification.mode = .optional
            }
            let range = Self.dutchRange()
            func job(_ n: Int, _ evidence: SMSVerificationJob.AppVerification? = nil) -> SMSVerificationJob {
                SMSVerificationJob(verificationID: "\(harness.namespace)-pv\(n)", phoneNumber: range + String(format: "%03d", n), locale: "en",
                                   appVerification: evidence)
            }
            for n in 0..<2 { #expect(try await FraudGuardTests.run(job(n), harness, sms).0 == "sent") }
            #expect(try await FraudGuardTests.run(job(2), harness, sms) == ("refused", "fraud_guard:prefix:\(range)"))
            let receipt = "\(harness.namespace)-receipt"
            let appID = "com.example.\(harness.namespace)"
            try await SMSAppVerificationTests.confirmedReceipt(receipt, appID: appID, harness: harness)
            #expect(try await FraudGuardTests.run(job(3, .init(receipt: receipt, appID: appID)), harness, sms).0 == "sent",
                    "an app that proved itself gets its code during the pause")
            #expect(try await FraudGuardTests.run(job(4), harness, sms) == ("refused", "fraud_guard:prefix:\(range)"), "the pause stays")
            try await worker.stop()
        }
    }
}
