import AMQP
import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
@testable import HeraldWire
import PostgresNIO
import Testing

/// Sliding-window counting (``RateWindows``) on the real database: `herald.sms_rate_take` is
/// called with the request's time as a parameter, so window edges are crossed without waiting;
/// and the client IP rules through a real worker.
@Suite(.needsServers) struct RateWindowTests {
    /// A time far from the clock's (no other test counts there), on a 60-second boundary.
    static let base = Date(timeIntervalSince1970: 1_900_000_800)

    private func take(_ harness: Harness, _ limits: RateLimits, at offset: Double) async throws -> String? {
        let at = Self.base.addingTimeInterval(offset)
        let rows = try await harness.database.query("""
            SELECT herald.sms_rate_take(\(limits.scopes)::text[], \(limits.keys)::text[], \(limits.windows)::int[], \(limits.maxes)::int[], \(at))
            """, logger: harness.logger)
        for try await refused in rows.decode(String?.self) { return refused }
        throw StoreError("no answer")
    }

    private func passes(_ harness: Harness, _ limits: RateLimits, at offset: Double) async throws -> Bool {
        try await take(harness, limits, at: offset) == nil
    }

    private func limit(_ scope: String, _ key: String, max: Int, window: Int) -> RateLimits {
        var limits = RateLimits()
        limits.add(scope, key: key, RateLimit(max: max, windowSeconds: window))
        return limits
    }

    @Test func theLimitHoldsAcrossAWindowEdge() async throws {
        try await withHarness() { harness async throws in
            let limits = limit("phone", "\(harness.namespace)-edge", max: 5, window: 60)
            // Five at the end of one fixed window…
            for _ in 0..<5 { #expect(try await passes(harness, limits, at: 59)) }
            // …and none at the start of the next (a fixed window let five more through here).
            #expect(try await take(harness, limits, at: 61) == "phone")
            #expect(try await take(harness, limits, at: 118) == "phone")
            // Room again once the bucket holding them (54-60 s) has left the window: at most one
            // bucket (a tenth of the window) later than an exact sliding log.
            #expect(try await take(harness, limits, at: 119) == "phone")
            #expect(try await passes(harness, limits, at: 120))
        }
    }

    @Test func noRunOfAWindowEverHoldsMoreThanTheMaximum() async throws {
        try await withHarness() { harness async throws in
            let limits = limit("phone", "\(harness.namespace)-stream", max: 5, window: 60)
            var admitted: [Double] = []
            for step in 0..<300 {
                let t = Double(step) * 2
                if try await take(harness, limits, at: t) == nil { admitted.append(t) }
            }
            for t in admitted {
                let inWindow = admitted.filter { $0 > t - 60 && $0 <= t }.count
                #expect(inWindow <= 5, "\(inWindow) admitted in the 60 s before \(t)")
            }
            // And it is not starved: 5 per window plus at most one bucket (66 s) over 600 s.
            #expect(admitted.count >= 5 * (600 / 66), "\(admitted.count)")
        }
    }

    @Test func aRefusalTakesNothingAndNamesTheFirstFullScope() async throws {
        try await withHarness() { harness async throws in
            var both = RateLimits()
            both.add("phone", key: "\(harness.namespace)-a", RateLimit(max: 1, windowSeconds: 60))
            both.add("prefix", key: "\(harness.namespace)-b", RateLimit(max: 1, windowSeconds: 60))
            #expect(try await passes(harness, both, at: 1))
            #expect(try await take(harness, both, at: 2) == "phone")
            var reversed = RateLimits()
            reversed.add("prefix", key: "\(harness.namespace)-b", RateLimit(max: 1, windowSeconds: 60))
            reversed.add("phone", key: "\(harness.namespace)-a", RateLimit(max: 1, windowSeconds: 60))
            #expect(try await take(harness, reversed, at: 3) == "prefix")
            // The refused requests left every count as it was: one each.
            let rows = try await harness.database.query("""
                SELECT sum(count)::int FROM herald.sms_rate_counters WHERE key IN (\("\(harness.namespace)-a"), \("\(harness.namespace)-b"))
                """, logger: harness.logger)
            for try await total in rows.decode(Int.self) { #expect(total == 2) }
            #expect(try await passes(harness, limit("prefix", "\(harness.namespace)-b", max: 2, window: 60), at: 4))
        }
    }

    @Test func theGlobalLimitSumsItsShards() async throws {
        try await withHarness() { harness async throws in
            // A window length of its own (global rows are keyed by it), emptied first.
            let window = 6007
            try await harness.database.query("DELETE FROM herald.sms_rate_counters WHERE scope = 'global' AND key LIKE \("shard-\(window)-%")",
                                             logger: harness.logger)
            let limits = limit("global", "", max: 20, window: window)
            var passed = 0
            for step in 0..<30 where try await take(harness, limits, at: Double(step)) == nil { passed += 1 }
            #expect(passed == 20)
            let rows = try await harness.database.query("""
                SELECT count(DISTINCT key)::int FROM herald.sms_rate_counters WHERE scope = 'global' AND key LIKE \("shard-\(window)-%")
                """, logger: harness.logger)
            for try await shards in rows.decode(Int.self) { #expect(shards > 1) }
        }
    }

    @Test func ipv6AddressesOfOneSlash64ShareTheIPLimitAndAnotherDoesNot() async throws {
        try await withHarness() { harness async throws in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start { $0.sms.ipLimit = .init(max: 2, windowSeconds: 3600) }
            var n = 0
            func request(_ ip: String) async throws -> String {
                n += 1
                let job = SMSVerificationJob(verificationID: "\(harness.namespace)-ip\(n)", phoneNumber: harness.phone(40 + n), client: .init(ip: ip))
                let id = try await harness.enqueue(job)
                try await eventually("decided \(n)") { ["completed", "rejected"].contains(try await harness.ledger(id)?.0 ?? "") }
                return try await harness.ledger(id)?.0 ?? ""
            }
            // Three addresses of one /64 (one written upper-case and uncompressed): one client.
            let host3 = harness.clientIP(host: 3).uppercased().replacingOccurrences(of: "::", with: ":0:0:0:")
            #expect(try await request(harness.clientIP(host: 1)) == "completed")
            #expect(try await request(harness.clientIP(host: 2)) == "completed")
            #expect(try await request(host3) == "rejected")
            #expect(try await sms.verification("\(harness.namespace)-ip3")?.reason == "rate_limited:ip")
            // The next /64 is another client.
            #expect(try await request(harness.clientIP(network: 1, host: 1)) == "completed")
            try await worker.stop()
        }
    }

    @Test(arguments: ["", "198.51.100.7/24", "1.2.3", "fe80::1%eth0", "2001:db8::1::2", "example.com", "01.2.3.4.5"])
    func anInvalidClientIPIsDeadLetteredNamingTheField(ip: String) async throws {
        try await withHarness() { harness async throws in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start()
            let body = #"{"version":1,"verification_id":"x","phone_number":"+4915112345678","purpose":"sign_in","client":{"ip":"\#(ip)"}}"#
            try await harness.client.publishRaw(body: Array(body.utf8), routingKey: "sms.verification",
                                                properties: JobEnvelope(messageID: "\(harness.namespace)-bad", typeName: SMSVerificationJob.typeName).properties())
            var letters: [AMQPDelivery] = []
            try await eventually("dead-lettered") {
                letters += try await harness.drainDeadLetters(.sms)
                return !letters.isEmpty
            }
            guard let reason = letters.first?.properties.deadLetterStamp?.reason else {
                Issue.record("no reason on the dead letter")
                return
            }
            #expect(reason.contains("client.ip must be an IPv4 or IPv6 address literal"), "\(reason)")
            #expect(ip.isEmpty || !reason.contains(ip))
            #expect(sms.delivered().isEmpty)
            try await worker.stop()
        }
    }
}
