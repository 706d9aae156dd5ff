import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
import PostgresNIO
import Testing

/// `herald.sms_prepare_batch` on the real database: a group decides exactly what its requests
/// decide one by one in the same order, whether its fast path holds (first requests, counted
/// together) or a refusal sends the whole group through `herald.sms_prepare` one at a time;
/// concurrent groups over the same counters neither deadlock nor lose a count.
@Suite(.needsServers) struct SMSBatchPrepareTests {
    /// A request of the group template: `number` picks one of the group's numbers (numbers
    /// 0–3 share a prefix), `id` its verification id (two entries with one id reuse it).
    struct Entry {
        var number: Int
        var id: Int
        var test = false
    }

    private func group(_ entries: [Entry], base: String, prefixLimit: Int) -> [PhoneStore.Request] {
        entries.map { entry in
            // Numbers 0–3 end in 00x of one prefix (drop 3 digits); 4 and up have a prefix each.
            let phone = entry.number < 4 ? "+4915\(base)000\(entry.number)" : "+4915\(base)\(entry.number)999"
            var limits = RateLimits()
            limits.add("phone", key: phone, RateLimit(max: 5, windowSeconds: 3600))
            limits.add("resend", key: phone, RateLimit(max: 3, windowSeconds: 3600))
            limits.add("prefix", key: String(phone.dropLast(3)), RateLimit(max: prefixLimit, windowSeconds: 3600))
            limits.add("global", key: "", RateLimit(max: 100_000_000, windowSeconds: 3600))
            return PhoneStore.Request(
                verificationID: "batch-\(base)-\(entry.id)", messageID: UUID().uuidString, phone: phone, purpose: "sign_in",
                force: false, test: entry.test, hash: StoredSecretHash(keyID: "k1", digest: Array(repeating: UInt8(entry.id), count: 32)),
                ttlSeconds: 300, maxAttempts: 5, resendIntervalSeconds: 30, limits: limits)
        }
    }

    /// Eight digits no other test uses.
    private func base() -> String { String(format: "%08d", Int.random(in: 0..<100_000_000)) }

    private func counted(_ harness: Harness, scope: String, keyPrefix: String) async throws -> Int {
        let rows = try await harness.database.query("""
            SELECT coalesce(sum(count), 0)::int FROM herald.sms_rate_counters WHERE scope = \(scope) AND key LIKE \(keyPrefix + "%")
            """, logger: harness.logger)
        for try await n in rows.decode(Int.self) { return n }
        return 0
    }

    private func states(_ harness: Harness, base: String) async throws -> [String] {
        let rows = try await harness.database.query("""
            SELECT state FROM herald.sms_verifications WHERE verification_id LIKE \("batch-\(base)-%") ORDER BY verification_id
            """, logger: harness.logger)
        var states: [String] = []
        for try await state in rows.decode(String.self) { states.append(state) }
        return states
    }

    /// Runs `entries` as one group and, on other numbers, one request at a time: the same
    /// decisions, rows and counts.
    private func expectSameAsOneByOne(_ entries: [Entry], prefixLimit: Int) async throws -> [PhoneStore.Decision] {
        try await withHarness { harness async throws in
            let (grouped, single) = (base(), base())
            let decisions = try await PhoneStore.prepare(group(entries, base: grouped, prefixLimit: prefixLimit),
                                                       client: harness.database, logger: harness.logger)
            var alone: [PhoneStore.Decision] = []
            for request in group(entries, base: single, prefixLimit: prefixLimit) {
                alone.append(try await PhoneStore.prepare(request, client: harness.database, logger: harness.logger))
            }
            #expect(decisions == alone)
            #expect(try await states(harness, base: grouped) == states(harness, base: single))
            for scope in ["phone", "prefix"] {
                #expect(try await counted(harness, scope: scope, keyPrefix: "+4915\(grouped)")
                        == counted(harness, scope: scope, keyPrefix: "+4915\(single)"), "\(scope) counts differ")
            }
            return decisions
        }
    }

    @Test func aGroupOfFirstRequestsIsDecidedAsItsRequestsAlone() async throws {
        // Six numbers, four of one prefix (limit 10): all fast, all sent, each counted once.
        let decisions = try await expectSameAsOneByOne((0..<6).map { Entry(number: $0, id: $0) }, prefixLimit: 10)
        #expect(decisions == Array(repeating: .send(uncertain: false), count: 6))
    }

    @Test func aGroupWithRetriesTestNumbersAndRepeatsIsDecidedAsItsRequestsAlone() async throws {
        // A number twice, a verification id reused for another number, a test number: those go
        // one by one after the fast ones; the rest are fast.
        let entries = [Entry(number: 0, id: 0), Entry(number: 4, id: 1), Entry(number: 0, id: 2),
                       Entry(number: 5, id: 0), Entry(number: 6, id: 3, test: true), Entry(number: 7, id: 4)]
        let decisions = try await expectSameAsOneByOne(entries, prefixLimit: 10)
        #expect(decisions[3] == .invalid(reason: "verification_id reused with a different phone_number"))
        #expect(decisions[4] == .test)
    }

    @Test func aGroupThatFillsALimitRefusesExactlyTheRequestsPastIt() async throws {
        // Four numbers of one prefix, limit 3: the fourth is refused, and uses no quota.
        let decisions = try await expectSameAsOneByOne((0..<5).map { Entry(number: $0, id: $0) }, prefixLimit: 3)
        #expect(decisions.filter { $0 == .refused(reason: "rate_limited:prefix") }.count == 1)
        #expect(decisions[3] == .refused(reason: "rate_limited:prefix"))
    }

    /// A first request on counters other groups share: its `prefix`, and the global shards.
    private func sharedCounters(id: String, phone: String, prefix: String) -> PhoneStore.Request {
        var limits = RateLimits()
        limits.add("phone", key: phone, RateLimit(max: 5, windowSeconds: 3600))
        limits.add("resend", key: phone, RateLimit(max: 3, windowSeconds: 3600))
        limits.add("prefix", key: prefix, RateLimit(max: 1_000, windowSeconds: 3600))
        limits.add("global", key: "", RateLimit(max: 100_000_000, windowSeconds: 3600))
        return PhoneStore.Request(
            verificationID: id, messageID: UUID().uuidString, phone: phone, purpose: "sign_in",
            force: false, test: false, hash: StoredSecretHash(keyID: "k1", digest: Array(repeating: 7, count: 32)),
            ttlSeconds: 300, maxAttempts: 5, resendIntervalSeconds: 30, limits: limits)
    }

    @Test func concurrentGroupsOnSharedCountersNeitherDeadlockNorLoseACount() async throws {
        try await withHarness { harness async throws in
            let shared = base()
            // Eight groups of 16 at once, every request on the same prefix counter (numbers
            // differ in their last three digits) and on the global shards.
            let groups: [[PhoneStore.Request]] = (0..<8).map { g in
                (0..<16).map { n in
                    sharedCounters(id: "batch-\(shared)-\(g)-\(n)", phone: "+4915\(shared)\(String(format: "%03d", g * 16 + n))",
                                   prefix: "+4915\(shared)")
                }
            }
            let decisions = try await withThrowingTaskGroup(of: [PhoneStore.Decision].self) { tasks in
                for group in groups {
                    tasks.addTask { try await PhoneStore.prepare(group, client: harness.database, logger: harness.logger) }
                }
                return try await tasks.reduce(into: []) { $0 += $1 }
            }
            #expect(decisions == Array(repeating: .send(uncertain: false), count: 128))
            #expect(try await counted(harness, scope: "prefix", keyPrefix: "+4915\(shared)") == 128)
            #expect(try await counted(harness, scope: "phone", keyPrefix: "+4915\(shared)") == 128)
            #expect(try await states(harness, base: shared) == Array(repeating: "sending", count: 128))
        }
    }
    @Test func concurrentGroupsWithRequestsDecidedOneByOneNeverDeadlock() async throws {
        try await withHarness { harness async throws in
            let shared = base()
            // Eight groups of eight at once on two prefix counters and the global shards. Two
            // numbers of each group have an expired pending code (a number asked for long ago):
            // those are decided one by one after the fast six, and count then. Crosswise: the
            // fast requests of even groups are on prefix 0 and their one-by-one requests on
            // prefix 1, odd groups the other way round. Before migration 29 a group held its fast
            // prefix (and its shard) while its one-by-one requests waited for the other prefix
            // (and shards of their own), which another group held while waiting for the first:
            // a deadlock.
            let phones = (0..<64).map { "+4915\(shared)\(String(format: "%03d", $0))" }
            for phone in phones.enumerated().filter({ $0.offset % 8 >= 6 }).map(\.element) {
                try await harness.database.query("""
                    INSERT INTO herald.sms_codes (phone_number, purpose, status, key_id, code_hash, max_attempts, sends, last_sent_at, expires_at)
                    VALUES (\(phone), 'sign_in', 'pending', 'k1', '\\x00'::bytea, 5, 1, now() - interval '2 hours', now() - interval '1 hour')
                    """, logger: harness.logger)
            }
            let groups: [[PhoneStore.Request]] = (0..<8).map { g in
                phones[(g * 8)..<(g * 8 + 8)].enumerated().map { n, phone in
                    sharedCounters(id: "batch-\(shared)-\(g)-\(n)", phone: phone, prefix: "+4915\(shared)-\((g + (n >= 6 ? 1 : 0)) % 2)")
                }
            }
            // prepareOnce: a deadlock (40P01) fails the test instead of being decided again.
            let decisions = try await withThrowingTaskGroup(of: [PhoneStore.Decision].self) { tasks in
                for group in groups {
                    tasks.addTask {
                        do {
                            return try await PhoneStore.prepareOnce(group, client: harness.database, logger: harness.logger)
                        } catch {
                            Issue.record("a group failed with SQLSTATE \(Database.sqlState(of: error) ?? "none") (40P01: a deadlock)")
                            throw error
                        }
                    }
                }
                return try await tasks.reduce(into: []) { $0 += $1 }
            }
            #expect(decisions == Array(repeating: .send(uncertain: false), count: 64))
            #expect(try await counted(harness, scope: "prefix", keyPrefix: "+4915\(shared)") == 64)
            #expect(try await counted(harness, scope: "phone", keyPrefix: "+4915\(shared)") == 64)
            #expect(try await counted(harness, scope: "resend", keyPrefix: "+4915\(shared)") == 0)
            #expect(try await states(harness, base: shared) == Array(repeating: "sending", count: 64))
        }
    }

    @Test func aGroupsSendsAreRecordedWithTheirAttemptsAndCountedByTheFraudGuardOnce() async throws {
        try await withHarness { harness async throws in
            let (grouped, region) = (base(), "Z\(harness.namespace.suffix(6))")
            let requests = group((0..<5).map { Entry(number: $0 + 4, id: $0) }, base: grouped, prefixLimit: 10)
            #expect(try await PhoneStore.prepare(requests, client: harness.database, logger: harness.logger)
                    == Array(repeating: .send(uncertain: false), count: 5))
            // Marked as the fraud guard marks what it judged: one region, one prefix for all five.
            for request in requests {
                try await harness.database.query("""
                    INSERT INTO herald.sms_fraud_marks (verification_id, phone_number, region, prefix)
                    VALUES (\(request.verificationID), \(request.phone), \(region), \(region + "-p"))
                    """, logger: harness.logger)
            }
            let sends = requests.enumerated().map { index, request in
                PhoneStore.Sent(verificationID: request.verificationID,
                              attempts: [DeliveryAttempt(provider: "webhook", result: .accepted, providerMessageID: "m\(index)", durationMilliseconds: 3)],
                              encoding: SMSEncoding("code"))
            }
            try await PhoneStore.sent(sends, client: harness.database, logger: harness.logger)
            // Recorded again (a repeat after a lost answer): nothing changes, nothing is counted twice.
            try await PhoneStore.sent(sends, client: harness.database, logger: harness.logger)
            #expect(try await states(harness, base: grouped) == Array(repeating: "sent", count: 5))
            let attempts = try await harness.database.query("""
                SELECT count(*)::int FROM herald.sms_send_attempts WHERE verification_id LIKE \("batch-\(grouped)-%")
                """, logger: harness.logger)
            for try await n in attempts.decode(Int.self) { #expect(n == 5) }
            let counts = try await harness.database.query("""
                SELECT scope, sum(sent)::int FROM herald.sms_fraud_counts WHERE key IN (\(region), \(region + "-p")) GROUP BY scope ORDER BY scope
                """, logger: harness.logger)
            var seen: [String: Int] = [:]
            for try await (scope, sent) in counts.decode((String, Int).self) { seen[scope] = sent }
            #expect(seen == ["prefix": 5, "region": 5])
        }
    }
}
