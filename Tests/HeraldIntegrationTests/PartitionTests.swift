import Foundation
import HeraldCleanup
import HeraldClient
@testable import HeraldRuntime
import HeraldWorkers
import PostgresNIO
import Testing

/// The tables partitioned by day (issue 33: runtime migration 0007, functions/partitions.sql,
/// functions/job_claim.sql) on the real PostgreSQL, each test in a database of its own: rows of
/// days no partition covers wait in the DEFAULT partition until the upkeep gives them their day;
/// a dropped day takes its rows and nothing else, the ledger's unfinished jobs moving on; the
/// ledger still answers for a message of an earlier day, and claims one new message once.
@Suite(.needsServers) struct PartitionTests {
    static let logger = TestEnvironment.logger("test.partitions")
    static let tables = ["job_runs", "event_outbox", "sms_send_attempts", "email_send_attempts", "push_send_attempts", "apple_attempts"]

    func count(_ sql: String, _ client: PostgresClient) async throws -> Int {
        try await client.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger).decode(Int.self).first { _ in true } ?? -1
    }

    /// Partition name -> rows, of `table`.
    func partitions(_ table: String, _ client: PostgresClient) async throws -> [String: Int] {
        var out: [String: Int] = [:]
        for try await (name, rows) in try await client.query(PostgresQuery(unsafeSQL: """
            SELECT b.partition::text, (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %s', b.partition), false, true, '')))[1]::text::int
              FROM herald.partition_bounds('herald.\(table)') b
            """), logger: Self.logger).decode((String, Int).self) {
            out[name.replacingOccurrences(of: "herald.", with: "")] = rows
        }
        return out
    }

    static func day(_ daysAgo: Int) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date().addingTimeInterval(-Double(daysAgo) * 86_400))
    }

    @Test func rowsOfEarlierDaysGetTheirDayAndADropTakesOnlyWhatIsPastRetention() async throws {
        try await withScratchDatabase("partitions") { _, client in
            try await Migrator(client: client, groups: HeraldFleet.schema, logger: Self.logger).migrate()
            // A new install: each table has today and the coming week, a DEFAULT partition, no legacy one.
            for table in Self.tables {
                let parts = try await partitions(table, client)
                #expect(parts.count == 9, "\(table): \(parts.keys.sorted())")
                #expect(parts["\(table)_p\(Self.day(0))"] == 0 && parts["\(table)_default"] == 0 && parts["\(table)_legacy"] == nil)
            }
            // Jobs first claimed 1…12 days ago (day 10's still waiting for a retry) and attempts of 2 and 10 days ago.
            try await client.query("""
                INSERT INTO herald.job_runs (message_id, job_type, queue, status, created_at, finished_at)
                SELECT 'old-' || g, 'sms.verification.v1', 'sms', CASE WHEN g = 10 THEN 'retrying' ELSE 'completed' END,
                       now() - make_interval(days => g), CASE WHEN g = 10 THEN NULL ELSE now() END
                  FROM generate_series(1, 12) g
                """, logger: Self.logger)
            try await client.query("""
                INSERT INTO herald.sms_send_attempts (verification_id, provider, result, duration_ms, created_at)
                SELECT 'v-' || d, 'twilio', 'accepted', 5, now() - make_interval(days => d) FROM unnest(ARRAY[2, 10, 10]) d
                """, logger: Self.logger)
            #expect(try await partitions("job_runs", client)["job_runs_default"] == 12, "no partition covered days 1…12 yet")

            // The upkeep gives each waiting day its partition and moves its rows in.
            #expect(try await count("SELECT herald.partitions_ensure_all(7)", client) == 12 + 2)
            let jobs = try await partitions("job_runs", client)
            #expect(jobs["job_runs_default"] == 0)
            for daysAgo in 1...12 { #expect(jobs["job_runs_p\(Self.day(daysAgo))"] == 1, "day -\(daysAgo)") }
            #expect(try await partitions("sms_send_attempts", client)["sms_send_attempts_p\(Self.day(10))"] == 2)

            // The ledger knows a message of an earlier day: finished, or waiting for its retry.
            let ledger = JobLedger(client: client, logger: Self.logger)
            #expect(try await ledger.claim(messageID: "old-5", jobType: "sms.verification.v1", queue: "sms", ownerKey: 7, token: "t5", leaseSeconds: 60)
                    == .finished(status: .completed))

            // What a dry run says a run would drop: the finished jobs of days 8…12.
            let preview = try await CleanupReport.make(client: client, configuration: CleanupConfiguration(), logger: Self.logger)
            #expect(preview.purgeable["job_runs"] == 4 && preview.purgeable["sms_send_attempts"] == 0)

            // Seven days' retention: days 8…12 go whole; day 10's unfinished job moves on to today.
            var dropped: [String: Int] = [:]
            var moved = 0
            for try await (name, rows, movedRows) in try await client.query("""
                SELECT partition, estimated_rows, moved_rows FROM herald.partitions_drop('herald.job_runs', now() - interval '7 days')
                """, logger: Self.logger).decode((String, Int, Int).self) {
                dropped[name] = rows
                moved += movedRows
            }
            #expect(dropped == Dictionary(uniqueKeysWithValues: [8, 9, 11, 12].map { ("herald.job_runs_p\(Self.day($0))", 1) } + [("herald.job_runs_p\(Self.day(10))", 0)]))
            #expect(moved == 1)
            #expect(try await count("SELECT count(*)::int FROM herald.job_runs", client) == 8)
            #expect(try await count("SELECT count(*)::int FROM herald.job_runs_p\(Self.day(0)) WHERE message_id = 'old-10' AND status = 'retrying'", client) == 1)
            #expect(try await ledger.claim(messageID: "old-10", jobType: "sms.verification.v1", queue: "sms", ownerKey: 7, token: "t10", leaseSeconds: 60)
                    == .claimed(attempt: 2, tookOver: false))
            // Today, the days ahead and the DEFAULT partition are never dropped, whatever the cutoff.
            _ = try await count("SELECT count(*)::int FROM herald.partitions_drop('herald.job_runs', now() + interval '30 days')", client)
            let left = try await partitions("job_runs", client)
            #expect(left.keys.contains("job_runs_p\(Self.day(0))") && left.keys.contains("job_runs_default") && left.count == 9)
            #expect(try await count("SELECT count(*)::int FROM herald.job_runs WHERE message_id = 'old-10'", client) == 1)

            // Only herald's day-partitioned tables: anything else is refused, named.
            await #expect(throws: PSQLError.self) {
                _ = try await count("SELECT count(*)::int FROM herald.partitions_drop('herald.accounts', now())", client)
            }
        }
    }

    /// The upkeep of a table a long statement holds (here a reader of its DEFAULT partition) waits
    /// 1 s for it, then leaves it to the next call; the other tables are done, and the next call
    /// does that one. Each day gets the table's storage settings; a week is the most it makes ahead.
    @Test func aBusyTableIsLeftToTheNextUpkeepAndTheOthersAreDone() async throws {
        try await withScratchDatabase("upkeep") { _, client in
            try await Migrator(client: client, groups: HeraldFleet.schema, logger: Self.logger).migrate()
            for table in ["job_runs (message_id, job_type, queue, status, created_at) VALUES ('busy-1', 'x.v1', 'x', 'completed',",
                          "sms_send_attempts (verification_id, provider, result, duration_ms, created_at) VALUES ('v-busy', 'twilio', 'accepted', 5,"] {
                try await client.query(PostgresQuery(unsafeSQL: "INSERT INTO herald.\(table) now() - interval '3 days')"), logger: Self.logger)
            }
            try await client.withConnection { reader in
                try await reader.query("BEGIN", logger: Self.logger)
                _ = try await reader.query("SELECT count(*) FROM herald.job_runs_default", logger: Self.logger).collect()
                let started = ContinuousClock.now
                #expect(try await count("SELECT herald.partitions_ensure_all(7)", client) == 1, "sms_send_attempts' day only")
                #expect(ContinuousClock.now - started < .seconds(5))
                try await reader.query("COMMIT", logger: Self.logger)
            }
            #expect(try await partitions("job_runs", client)["job_runs_default"] == 1)
            #expect(try await partitions("sms_send_attempts", client)["sms_send_attempts_p\(Self.day(3))"] == 1)
            #expect(try await count("SELECT herald.partitions_ensure_all(7)", client) == 1)
            #expect(try await partitions("job_runs", client)["job_runs_p\(Self.day(3))"] == 1)
            // sms_send_attempts' settings (sms 0010) on each of its days.
            #expect(try await count("""
                SELECT count(*)::int FROM herald.partition_bounds('herald.sms_send_attempts') b JOIN pg_class c ON c.oid = b.partition
                 WHERE NOT 'autovacuum_analyze_threshold=1000' = ANY (coalesce(c.reloptions, '{}'))
                """, client) == 0)
            await #expect(throws: PSQLError.self) {
                _ = try await count("SELECT herald.partitions_ensure('herald.job_runs', 365)", client)
            }
        }
    }

    /// Claims of one new message racing on two connections: one claims it, the other is told it
    /// is busy, and the ledger holds one row. Without the advisory lock in herald.job_claim both
    /// claim it (the day's key holds created_at, so two inserts do not collide).
    @Test func racingClaimsOfOneNewMessageClaimItOnce() async throws {
        try await withScratchDatabase("claimrace") { url, client in
            try await Migrator(client: client, groups: HeraldFleet.schema, logger: Self.logger).migrate()
            let ledger = JobLedger(client: client, logger: Self.logger)
            let owner = Int64.random(in: 1...Int64.max / 2)
            // The claimants' process lives (its presence lock held elsewhere), so a second claim cannot take over.
            // (Advisory locks are per database: the scratch one's.)
            var presence = DatabaseConfiguration(url: url, maxConnections: 1)
            presence.tls = .disable
            let holder = try Database.makeClient(presence, logger: Self.logger)
            let task = Task { await holder.run() }
            defer { task.cancel() }
            try await holder.withConnection { connection in
                try await connection.query("SELECT pg_advisory_lock(\(owner))", logger: Self.logger)
                for round in 0..<40 {
                    let id = "race-\(round)"
                    let answers = try await withThrowingTaskGroup(of: JobLedger.Claim.self) { group in
                        for token in ["a", "b"] {
                            group.addTask {
                                try await ledger.claim(messageID: id, jobType: "sms.verification.v1", queue: "sms", ownerKey: owner, token: token, leaseSeconds: 60)
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(answers.filter { $0 == .claimed(attempt: 1, tookOver: false) }.count == 1 && answers.contains(.busy), "\(id): \(answers)")
                    #expect(try await count("SELECT count(*)::int FROM herald.job_runs WHERE message_id = '\(id)'", client) == 1)
                }
                try await connection.query("SELECT pg_advisory_unlock(\(owner))", logger: Self.logger)
            }
        }
    }
}
