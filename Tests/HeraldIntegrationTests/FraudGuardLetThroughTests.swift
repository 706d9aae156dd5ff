import Foundation
import PostgresNIO
import Testing
@testable import HeraldPhone
@testable import HeraldRuntime

/// The fraud guard's let-through count (issue 48, docs/abuse.md): kept per scope and minute by
/// triggers (`herald.sms_fraud_let_through`), it must equal at every step what the guard counted
/// before, its marks of the window whose verification did not end reused, refused or failed,
/// read one by one (`truth` below, over the same minutes). Each test in a region and prefixes of
/// its own, on the functions themselves.
@Suite(.needsServers) struct FraudGuardLetThroughTests {
    /// A region and two prefixes no other test uses.
    struct Scopes {
        let region: String
        let prefixes: [String]
        init(_ harness: Harness) {
            let tag = String(harness.namespace.suffix(6))
            region = "L\(tag)"
            prefixes = ["+990\(tag)1", "+990\(tag)2"]
        }
        var all: [(String, String)] { [("region", region)] + prefixes.map { ("prefix", $0) } }
    }

    static func number(_ harness: Harness, _ query: PostgresQuery) async throws -> Int {
        try await harness.database.query(query, logger: harness.logger).decode(Int.self).first { _ in true } ?? -1
    }

    /// What the guard reads now (`herald.fraud_guard_activity`'s let-through count).
    static func kept(_ harness: Harness, _ scope: String, _ key: String, window: Int = 60) async throws -> Int {
        try await number(harness, "SELECT let_through::int FROM herald.fraud_guard_activity(\(scope)::text, \(key)::text, \(window)::int)")
    }

    /// The count as the guard made it before issue 48: each mark of the window's minutes, and its verification.
    static func truth(_ harness: Harness, _ scope: String, _ key: String, window: Int = 60) async throws -> Int {
        try await number(harness, """
            SELECT count(*)::int FROM herald.sms_fraud_marks m
             WHERE (CASE \(scope)::text WHEN 'region' THEN m.region ELSE m.prefix END) = \(key)
               AND date_trunc('minute', m.created_at) > date_trunc('minute', now()) - make_interval(mins => \(window)::int)
               AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v
                                WHERE v.verification_id = m.verification_id AND v.state IN ('reused', 'refused', 'failed'))
            """)
    }

    /// The kept count of every scope equals the truth, which is `expected` (region, then each prefix).
    static func expectCounts(_ harness: Harness, _ scopes: Scopes, _ expected: [Int], window: Int = 60,
                             _ step: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for ((scope, key), want) in zip(scopes.all, expected) {
            let (kept, truth) = (try await kept(harness, scope, key, window: window), try await truth(harness, scope, key, window: window))
            #expect(kept == truth && truth == want, "\(step): \(scope) kept \(kept), marks \(truth), expected \(want)", sourceLocation: sourceLocation)
        }
    }

    /// Judged by the guard with its floors out of reach: marked, and counted.
    static func judge(_ harness: Harness, _ id: String, region: String, prefix: String) async throws {
        try await harness.database.query("""
            SELECT * FROM herald.fraud_guard_check(\(id), '+15550100', \(region), \(prefix), 60, 1000000, 1000000, 0.5, 60, 3600, 3600, '', 1.0)
            """, logger: harness.logger)
    }

    /// Judged together as herald-sms judges a group (`herald.fraud_guard_judge`), floors out of
    /// reach unless `prefixFloor` says: the indexes (from 1) of the requests refused.
    static func judgeTogether(_ harness: Harness, _ ids: [String], region: String, prefixes: [String], again: [Bool]? = nil,
                              regionFloor: Int = 1_000_000, prefixFloor: Int = 1_000_000) async throws -> [Int] {
        let count = ids.count
        let rows = try await harness.database.query("""
            SELECT o_index::int FROM herald.fraud_guard_judge(\(ids), \([String](repeating: "+15550100", count: count)),
                                                         \([String](repeating: region, count: count)), \(prefixes), \([String](repeating: "", count: count)),
                                                         \(again ?? [Bool](repeating: false, count: count)), \([Bool](repeating: false, count: count)),
                                                         60, \(regionFloor)::int, \(prefixFloor)::int, 0.5, 60, 3600, 3600, 1.0, 0)
            """, logger: harness.logger)
        var refused: [Int] = []
        for try await index in rows.decode(Int.self) { refused.append(index) }
        return refused.sorted()
    }

    static func insertVerification(_ harness: Harness, _ id: String, state: String) async throws {
        try await harness.database.query("""
            INSERT INTO herald.sms_verifications (verification_id, phone_number, purpose, message_id, state, reason)
            VALUES (\(id), '+15550100', 'sign_in', \(id + "-m"), \(state), CASE WHEN \(state)::text = 'refused' THEN 'rate_limited:phone' END)
            """, logger: harness.logger)
    }

    static func setState(_ harness: Harness, _ id: String, _ state: String) async throws {
        try await harness.database.query("UPDATE herald.sms_verifications SET state = \(state) WHERE verification_id = \(id)", logger: harness.logger)
    }

    static func clear(_ harness: Harness, _ scopes: Scopes) async throws {
        try await harness.database.query("DELETE FROM herald.sms_verifications WHERE verification_id LIKE \(harness.namespace + "-%")", logger: harness.logger)
        try await harness.database.query("DELETE FROM herald.sms_fraud_marks WHERE region = \(scopes.region)", logger: harness.logger)
        try await harness.database.query("DELETE FROM herald.sms_fraud_let_through WHERE key = ANY(\([scopes.region] + scopes.prefixes))", logger: harness.logger)
        try await harness.database.query("DELETE FROM herald.sms_fraud_pauses WHERE key = ANY(\([scopes.region] + scopes.prefixes))", logger: harness.logger)
    }

    /// Every way a marked verification ends: written reused or refused after its mark (a code
    /// reused, a limit's refusal), sent, failed later, refused and then sending again (back in the
    /// count), a mark rewritten for another prefix (a redelivered job), a mark deleted.
    @Test func theKeptCountFollowsEveryOutcomeOfAMarkedVerification() async throws {
        try await withHarness { harness in
            let scopes = Scopes(harness)
            let (p1, p2) = (scopes.prefixes[0], scopes.prefixes[1])
            let id = { (n: Int) in "\(harness.namespace)-o\(n)" }
            for n in 0..<8 { try await Self.judge(harness, id(n), region: scopes.region, prefix: n < 6 ? p1 : p2) }
            try await Self.expectCounts(harness, scopes, [8, 6, 2], "eight judged")
            try await Self.insertVerification(harness, id(0), state: "sending")
            try await Self.insertVerification(harness, id(1), state: "reused")
            try await Self.insertVerification(harness, id(2), state: "refused")
            try await Self.expectCounts(harness, scopes, [6, 4, 2], "one reused, one refused after their marks")
            try await Self.setState(harness, id(0), "sent")
            try await Self.insertVerification(harness, id(3), state: "sending")
            try await Self.setState(harness, id(3), "failed")
            try await Self.expectCounts(harness, scopes, [5, 3, 2], "one sent, one failed")
            try await Self.setState(harness, id(3), "failed")
            try await Self.setState(harness, id(1), "refused")
            try await Self.expectCounts(harness, scopes, [5, 3, 2], "failed again, reused turned refused: no change")
            try await Self.setState(harness, id(2), "sending")
            try await Self.expectCounts(harness, scopes, [6, 4, 2], "refused, then sending again")
            // Judged again before its verification was written (a redelivery), for another prefix.
            try await harness.database.query("UPDATE herald.sms_fraud_marks SET prefix = \(p2) WHERE verification_id = \(id(4))", logger: harness.logger)
            try await Self.expectCounts(harness, scopes, [6, 3, 3], "a mark moved to the other prefix")
            try await harness.database.query("DELETE FROM herald.sms_fraud_marks WHERE verification_id IN (\(id(5)), \(id(1)))", logger: harness.logger)
            try await Self.expectCounts(harness, scopes, [5, 2, 3], "a counted mark and a refused one deleted")
            // A verification written refused before its mark: the mark is not counted until it sends again.
            try await Self.insertVerification(harness, id(9), state: "refused")
            for n in [9, 10] {
                try await harness.database.query("""
                    INSERT INTO herald.sms_fraud_marks (verification_id, phone_number, region, prefix) VALUES (\(id(n)), '+15550100', \(scopes.region), \(p2))
                    """, logger: harness.logger)
            }
            try await Self.expectCounts(harness, scopes, [6, 2, 4], "a mark after its verification's refusal, and another")
            try await Self.setState(harness, id(9), "sending")
            try await Self.insertVerification(harness, id(10), state: "reused")
            try await Self.expectCounts(harness, scopes, [6, 2, 4], "the refused one sending again, the other reused")
            try await Self.clear(harness, scopes)
        }
    }

    /// Twelve requests judged in one statement (one group), floor 5, nothing sent yet: each one
    /// reads the count the earlier ones left, so 5 go ahead and the sixth pauses the prefix.
    @Test func aBurstJudgedInOneStatementCountsItsOwnMarks() async throws {
        try await withHarness { harness in
            let scopes = Scopes(harness)
            let passed = try await Self.number(harness, """
                SELECT count(*) FILTER (WHERE f.o_scope IS NULL)::int
                  FROM generate_series(1, 12) AS i
                  LEFT JOIN LATERAL herald.fraud_guard_check(\(harness.namespace + "-b")::text || i, '+15550100', \(scopes.region), \(scopes.prefixes[0]),
                                                             60, 1000000, 5, 0.5, 60, 3600, 3600, '', 1.0, false, false, 0) f ON true
                """)
            #expect(passed == 5)
            try await Self.expectCounts(harness, scopes, [5, 5, 0], "a burst of 12 against a floor of 5")
            try await Self.clear(harness, scopes)
        }
    }

    /// A group judged as herald-sms judges it (`herald.fraud_guard_judge`, issue 48): the marks
    /// are added to the count once, at the group's end, and each request is judged with the
    /// group's earlier marks counted from the group. Twelve requests against a prefix floor of 5,
    /// one of them twice and one a later send of its verification (judged, not counted): 5 go
    /// ahead, the sixth pauses the prefix, and the count is the marks', one row per scope and minute.
    @Test func aGroupJudgedTogetherCountsItsOwnMarksOnceAtItsEnd() async throws {
        try await withHarness { harness in
            let scopes = Scopes(harness)
            var ids = (1...12).map { "\(harness.namespace)-j\($0)" }
            ids.insert(ids[1], at: 3)
            var again = [Bool](repeating: false, count: ids.count)
            again[2] = true
            let refused = try await Self.judgeTogether(harness, ids, region: scopes.region, prefixes: ids.map { _ in scopes.prefixes[0] },
                                                       again: again, prefixFloor: 5)
            // 1 and 2 go ahead, 3 is judged again (not counted), 2 twice counts once, 4 5 6 go ahead: the next pauses.
            #expect(refused == Array(8...ids.count), "\(refused)")
            try await Self.expectCounts(harness, scopes, [5, 5, 0], "a group of 13 against a floor of 5")
            let rows = try await Self.number(harness, "SELECT count(*)::int FROM herald.sms_fraud_let_through WHERE key = ANY(\([scopes.region] + scopes.prefixes))")
            #expect(rows == 2, "one row for the region's minute and one for the prefix's")
            try await Self.clear(harness, scopes)
        }
    }

    /// A group counts only the marks it makes: a request whose mark an earlier transaction made (a
    /// redelivered job, its verification not written yet) moves that mark at once, as outside a
    /// group, and one whose verification was written is not judged again.
    @Test func aGroupCountsOnlyTheMarksItMakes() async throws {
        try await withHarness { harness in
            let scopes = Scopes(harness)
            let (p1, p2) = (scopes.prefixes[0], scopes.prefixes[1])
            let (x, y, z) = ("\(harness.namespace)-x", "\(harness.namespace)-y", "\(harness.namespace)-z")
            try await Self.judge(harness, x, region: scopes.region, prefix: p1)
            try await Self.judge(harness, z, region: scopes.region, prefix: p1)
            try await Self.insertVerification(harness, z, state: "sending")
            try await Self.expectCounts(harness, scopes, [2, 2, 0], "two judged alone")
            #expect(try await Self.judgeTogether(harness, [x, y, z], region: scopes.region, prefixes: [p2, p2, p2]).isEmpty)
            try await Self.expectCounts(harness, scopes, [3, 1, 2], "x moved to the other prefix, y new, z judged before")
            try await Self.clear(harness, scopes)
        }
    }

    /// A redelivered job in a group near a floor: its mark, made before, is in the count already,
    /// so the group does not count it again. One mark before, prefix floor 3: of the three new
    /// requests after it, two go ahead and the third is refused.
    @Test func aRedeliveredMarkInAGroupIsNotCountedTwiceAgainstItsFloor() async throws {
        try await withHarness { harness in
            let scopes = Scopes(harness)
            let p = scopes.prefixes[1]
            let ids = ["x", "y1", "y2", "y3"].map { "\(harness.namespace)-\($0)" }
            try await Self.judge(harness, ids[0], region: scopes.region, prefix: p)
            let refused = try await Self.judgeTogether(harness, ids, region: scopes.region, prefixes: [String](repeating: p, count: 4), prefixFloor: 3)
            #expect(refused == [4], "\(refused)")
            try await Self.expectCounts(harness, scopes, [3, 0, 3], "the redelivered mark and two new ones")
            try await Self.clear(harness, scopes)
        }
    }

    /// The group's own marks count in its region too: eight requests of one region over two
    /// prefixes against a region floor of 5, nothing counted before: 5 go ahead.
    @Test func aGroupReachesItsRegionsFloorOnItsOwnMarks() async throws {
        try await withHarness { harness in
            let scopes = Scopes(harness)
            let ids = (1...8).map { "\(harness.namespace)-r\($0)" }
            let refused = try await Self.judgeTogether(harness, ids, region: scopes.region, prefixes: (1...8).map { scopes.prefixes[$0 % 2] },
                                                       regionFloor: 5)
            #expect(refused == [6, 7, 8], "\(refused)")
            try await Self.expectCounts(harness, scopes, [5, 2, 3], "a group of 8 against a region floor of 5")
            try await Self.clear(harness, scopes)
        }
    }

    /// Groups judged at once by several connections, in one region and prefix, and then their
    /// verifications refused at once: every mark is counted once, and taken off once. Judged
    /// together (`herald.fraud_guard_judge`, herald-sms's) and, as a herald-sms of the previous
    /// version judges a group during a rolling upgrade, request by request in one statement.
    @Test(arguments: [true, false]) func groupsJudgedAtOnceKeepTheCountExact(together: Bool) async throws {
        try await withHarness { harness in
            let scopes = Scopes(harness)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for group in 0..<4 {
                    tasks.addTask {
                        let ids = (1...25).map { "\(harness.namespace)-g\(group)-\($0)" }
                        let prefixes = (1...25).map { scopes.prefixes[$0 % 2 == 0 ? 0 : 1] }
                        try await Database.retryingConflicts {
                            if together {
                                _ = try await Self.judgeTogether(harness, ids, region: scopes.region, prefixes: prefixes)
                            } else {
                                _ = try await harness.database.query("""
                                    SELECT count(*) FROM unnest(\(ids)::text[], \(prefixes)::text[]) AS u(id, prefix)
                                      LEFT JOIN LATERAL herald.fraud_guard_check(u.id, '+15550100', \(scopes.region), u.prefix,
                                                                                 60, 1000000, 1000000, 0.5, 60, 3600, 3600, '', 1.0, false, false, 0) f ON true
                                    """, logger: harness.logger)
                            }
                        }
                    }
                }
                try await tasks.waitForAll()
            }
            try await Self.expectCounts(harness, scopes, [100, 48, 52], "four groups of 25 at once")
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for group in 0..<4 {
                    tasks.addTask {
                        try await Database.retryingConflicts {
                            _ = try await harness.database.query("""
                                INSERT INTO herald.sms_verifications (verification_id, phone_number, purpose, message_id, state, reason)
                                SELECT \(harness.namespace + "-g\(group)-")::text || i, '+15550100', 'sign_in', \(harness.namespace + "-m\(group)-")::text || i,
                                       CASE WHEN i <= 10 THEN 'refused' ELSE 'sending' END, CASE WHEN i <= 10 THEN 'rate_limited:phone' END
                                  FROM generate_series(1, 25) AS i
                                """, logger: harness.logger)
                        }
                    }
                }
                try await tasks.waitForAll()
            }
            try await Self.expectCounts(harness, scopes, [60, 28, 32], "ten of each group refused at once")
            try await Self.clear(harness, scopes)
        }
    }

    /// A mark counts in the window's minutes only, as the sends do (`sms_fraud_counts`): one an
    /// hour and a half or 62 minutes old is out of a window of 60 and in one of 120; one two days
    /// old is in none, and neither it nor its verification's refusal writes a minute.
    @Test func aMarkLeavesTheCountWithItsMinute() async throws {
        try await withHarness { harness in
            let scopes = Scopes(harness)
            for (n, minutes) in [0, 30, 58, 62, 90, 2880].enumerated() {
                try await harness.database.query("""
                    INSERT INTO herald.sms_fraud_marks (verification_id, phone_number, region, prefix, created_at)
                    VALUES (\(harness.namespace + "-w\(n)"), '+15550100', \(scopes.region), \(scopes.prefixes[0]), now() - make_interval(mins => \(minutes)::int))
                    """, logger: harness.logger)
            }
            try await Self.expectCounts(harness, scopes, [3, 3, 0], window: 60, "window 60")
            try await Self.expectCounts(harness, scopes, [5, 5, 0], window: 120, "window 120")
            try await Self.insertVerification(harness, harness.namespace + "-w5", state: "refused")
            try await Self.insertVerification(harness, harness.namespace + "-w4", state: "refused")
            try await Self.expectCounts(harness, scopes, [4, 4, 0], window: 120, "the 90-minute one refused")
            try await Self.expectCounts(harness, scopes, [4, 4, 0], window: 1440, "a day")
            let minutes = try await Self.number(harness, """
                SELECT count(*)::int FROM herald.sms_fraud_let_through WHERE key = \(scopes.region) AND minute < now() - interval '1 day'
                """)
            #expect(minutes == 0, "a minute no window reads was written")
            try await Self.clear(harness, scopes)
        }
    }
}
