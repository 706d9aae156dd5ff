import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The big-table rows (issue 33, `BENCH_ONLY=bigtable`): the SMS job on a database whose ledger
/// (`job_runs`) and SMS tables (`sms_verifications`, `sms_codes`) hold `rows` rows each, next to
/// the same job on a new database of small tables, in the same invocation; then the same paced
/// sign-in load on the big database twice, the second time with one day of the ledger dropped in
/// the middle (`herald.partitions_drop`), for the drop's duration and the sign-ins' p99.
///
/// The big database (`<bench database>_big`) is kept between invocations: filling it is most of
/// the time (set-based INSERTs, never through the workers). Its rows are spread over the ten
/// days before today, in the ledger's day partitions; each invocation drops the oldest day and
/// fills up to `rows` again. BENCH_BIG_REBUILD=1 starts it over.
enum BigTables {
    static let chunk = 2_000_000

    static func runs(count: Int, rows: Int, rate: Double, seconds: Double, configuration base: HeraldConfiguration, logger: Logger) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        // The small tables: a new database, warmed by a first run and analyzed as autovacuum would.
        let paced = max(Int(rate * seconds), 1)
        results += try await ColdDatabase.with(base, logger: logger) { cold, configuration in
            _ = try await smsEndToEnd(count: count, workers: 1, configuration: configuration, logger: logger)
            try await cold.analyze()
            var small = try await smsEndToEnd(count: count, workers: 1, configuration: configuration, logger: logger)
            small.name = "herald-sms, 1 worker, small tables"
            var calm = try await smsProcesses(count: paced, processes: 1, pacedRate: rate, configuration: configuration, logger: logger)
            calm.name = "paced \(Int(rate))/s, small tables"
            return [small, calm]
        }

        let big = try ColdDatabase(bench: base.database, suffix: "big", logger: logger)
        if ProcessInfo.processInfo.environment["BENCH_BIG_REBUILD"] == "1" { try await big.drop() }
        try await big.createIfAbsent()
        try await big.migrate()
        try await fill(big, rows: rows, logger: logger)
        let held = try await big.withClient(big.configuration) { try await estimate("job_runs", $0, logger: logger) }
        var configuration = base
        configuration.database = big.configuration
        var large = try await smsEndToEnd(count: count, workers: 1, configuration: configuration, logger: logger)
        large.name = "herald-sms, 1 worker, \(DatabaseSize.format(Int64(held)))-row tables"
        results.append(large)

        // The same paced sign-ins, without and with a day of the ledger dropped halfway.
        var calm = try await smsProcesses(count: paced, processes: 1, pacedRate: rate, configuration: configuration, logger: logger)
        calm.name = "paced \(Int(rate))/s, \(DatabaseSize.format(Int64(held)))-row tables"
        results.append(calm)
        async let dropped = dropOldestDay(big, after: .seconds(seconds / 2), logger: logger)
        var during = try await smsProcesses(count: paced, processes: 1, pacedRate: rate, configuration: configuration, logger: logger)
        let drop = try await dropped
        during.name = "paced \(Int(rate))/s, a day dropped in the middle"
        results.append(during)
        print(String(format: "big tables: one day of the ledger (%@, %@ rows estimated) dropped in %.0f ms, %d unfinished jobs moved",
                     drop.partition, DatabaseSize.format(drop.rows), drop.milliseconds, drop.moved))
        return results
    }

    /// Fills the big database's ledger and SMS tables up to `rows` rows each (PostgreSQL's
    /// estimates after an ANALYZE), set-based, `chunk` rows per statement.
    static func fill(_ big: ColdDatabase, rows: Int, logger: Logger) async throws {
        try await big.withClient(big.configuration) { client in
            try await client.query("ANALYZE herald.sms_codes, herald.sms_verifications", logger: logger)
            // The ten days' partitions, for a fill: one row of each day waiting in DEFAULT, then the upkeep.
            let ledger = try await estimate("job_runs", client, logger: logger)
            let verifications = try await estimate("sms_verifications", client, logger: logger)
            guard ledger < rows * 9 / 10 || verifications < rows * 9 / 10 else { return }
            try await client.query("""
                INSERT INTO herald.job_runs (message_id, job_type, queue, status, created_at, finished_at)
                SELECT 'big-day-' || to_char(now() - make_interval(days => d), 'YYYYMMDD'), 'sms.verification.v1', 'sms', 'completed',
                       now() - make_interval(days => d), now() - make_interval(days => d)
                  FROM generate_series(1, 10) d
                 WHERE NOT EXISTS (SELECT 1 FROM herald.job_runs j WHERE j.message_id = 'big-day-' || to_char(now() - make_interval(days => d), 'YYYYMMDD'))
                """, logger: logger)
            try await client.query("SELECT herald.partitions_ensure_all(7)", logger: logger)
            // Each invocation numbers its rows from its own slot of 10⁸: ids never repeat.
            let base = Int.random(in: 1..<1_000_000) * 100_000_000
            for table in ["job_runs", "sms_codes", "sms_verifications"] {
                var have = try await estimate(table, client, logger: logger)
                var codes = 1...1
                for try await (low, high) in try await client.query("SELECT coalesce(min(id), 1), coalesce(max(id), 1) FROM herald.sms_codes",
                                                                    logger: logger).decode((Int, Int).self) { codes = low...high }
                let started = ContinuousClock.now
                let from = have
                // Topped up only once a tenth or more is gone (a day dropped is a tenth): a fill
                // leaves PostgreSQL busy writing and vacuuming for a while, which the runs would measure.
                while have < rows * 9 / 10 || (have > from && have < rows) {
                    let n = min(chunk, rows - have)
                    try await client.query(PostgresQuery(unsafeSQL: insert(table, first: base + have, count: n, codes: codes)), logger: logger)
                    have += n
                    if (have / chunk) % 5 == 0 { print("big tables: \(table) \(DatabaseSize.format(Int64(have))) rows") }
                }
                if have > from {
                    try await client.query(PostgresQuery(unsafeSQL: "ANALYZE herald.\(table)"), logger: logger)
                    let took = (ContinuousClock.now - started).seconds
                    print(String(format: "big tables: %@ filled to %@ rows in %.0f s", table, DatabaseSize.format(Int64(have)), took))
                }
            }
            try await client.query("VACUUM ANALYZE", logger: logger)
        }
    }

    /// Rows of `table` (PostgreSQL's estimates, ``DatabaseSize/estimates(_:client:logger:)``).
    static func estimate(_ table: String, _ client: PostgresClient, logger: Logger) async throws -> Int {
        Int(try await DatabaseSize.estimates([table], client: client, logger: logger)[table] ?? 0)
    }

    /// `count` rows of `table` from the number `first`, over the ten days before today.
    /// Numbers and ids as the bench's jobs make them (+4917…, random-looking UUIDs), codes
    /// expired (the pending-code index stays small, as in a live system), each verification
    /// with one of the codes (ids `codes`).
    static func insert(_ table: String, first: Int, count: Int, codes: ClosedRange<Int>) -> String {
        let series = "generate_series(\(first)::bigint, \(first + count - 1)::bigint) g"
        let when = "date_trunc('day', now(), 'UTC') - interval '10 days' + make_interval(secs => (g * 7919) % 864000)"
        let phone = "'+4917' || lpad((((g % 1000000000) * 2654435761) % 1000000000)::text, 9, '0')"
        switch table {
        case "job_runs":
            return """
                INSERT INTO herald.job_runs (message_id, job_type, queue, status, attempts, created_at, updated_at, finished_at)
                SELECT md5('m' || g)::uuid::text, 'sms.verification.v1', 'sms', 'completed', 1, \(when), \(when), \(when) + interval '1 second'
                  FROM \(series)
                """
        case "sms_codes":
            return """
                INSERT INTO herald.sms_codes (phone_number, purpose, status, key_id, code_hash, attempts, max_attempts, sends,
                                              created_at, last_sent_at, expires_at, finished_at)
                SELECT \(phone), 'sign_in', 'expired', 'k1', decode(md5('c' || g), 'hex'), 0, 5, 1,
                       \(when), \(when), \(when) + interval '10 minutes', \(when) + interval '10 minutes'
                  FROM \(series)
                """
        default:
            return """
                INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends,
                                                      provider, provider_message_id, segments, encoding, created_at, updated_at)
                SELECT md5('v' || g)::uuid::text, \(codes.lowerBound) + g % \(codes.count), \(phone), 'sign_in', md5('m' || g)::uuid::text,
                       'sent', 1, 'webhook', 'bench', 1, 'gsm7', \(when), \(when)
                  FROM \(series)
                """
        }
    }

    struct Drop {
        var partition: String
        var rows: Int64
        var moved: Int
        var milliseconds: Double
    }

    /// After `delay`, the ledger's oldest day of generated rows dropped (with any emptier day before it).
    static func dropOldestDay(_ big: ColdDatabase, after delay: Duration, logger: Logger) async throws -> Drop {
        try await Task.sleep(for: delay)
        return try await big.withClient(big.configuration) { client in
            var drop = Drop(partition: "none", rows: 0, moved: 0, milliseconds: 0)
            var end: Date?
            for try await bound in try await client.query("""
                SELECT b.upper_bound FROM herald.partition_bounds('herald.job_runs') b JOIN pg_class c ON c.oid = b.partition
                 WHERE NOT b.is_default AND c.reltuples > 100000 ORDER BY b.upper_bound LIMIT 1
                """, logger: logger).decode(Date.self) { end = bound }
            guard let end else { return drop }
            let started = ContinuousClock.now
            for try await (partition, rows, moved) in try await client.query("""
                SELECT partition, estimated_rows, moved_rows FROM herald.partitions_drop('herald.job_runs', \(end))
                """, logger: logger).decode((String, Int64, Int).self) {
                drop.partition = drop.partition == "none" ? partition : drop.partition + ", " + partition
                drop.rows += rows
                drop.moved += moved
            }
            drop.milliseconds = (ContinuousClock.now - started).milliseconds
            return drop
        }
    }
}
