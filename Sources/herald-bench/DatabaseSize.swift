import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// How many rows the bench database's SMS tables hold: PostgreSQL's CPU per job grows with them
/// (bigger indexes, autovacuum, pages that no longer fit in shared_buffers), and the bench
/// database keeps every earlier invocation's jobs. Printed above the runs so that figures are
/// compared at similar sizes (docs/benchmarks-journal.md, "The bench database's size").
struct DatabaseSize: Sendable {
    static let tables = ["job_runs", "sms_verifications", "sms_codes", "sms_rate_counters"]
    var rows: [String: Int64]

    /// PostgreSQL's own estimates (`pg_class.reltuples`, kept by autovacuum and ANALYZE): no
    /// count over millions of rows; a table never analyzed counts 0.
    static func read(configuration: DatabaseConfiguration, logger: Logger) async throws -> DatabaseSize {
        var settings = configuration
        settings.maxConnections = 1
        let client = try Database.makeClient(settings, logger: logger)
        let task = Task { await client.run() }
        defer { task.cancel() }
        return DatabaseSize(rows: try await estimates(tables, client: client, logger: logger))
    }

    /// The estimates of `names` (tables of schema herald). A table partitioned by day (the
    /// ledger) holds no rows itself (an analyzed one repeats its partitions' estimate): its
    /// partitions' add up.
    static func estimates(_ names: [String], client: PostgresClient, logger: Logger) async throws -> [String: Int64] {
        var rows: [String: Int64] = [:]
        for try await (name, estimate) in try await client.query("""
            SELECT c.relname, (CASE WHEN c.relkind = 'p' THEN 0 ELSE greatest(c.reltuples, 0) END
                               + coalesce((SELECT sum(greatest(p.reltuples, 0)) FROM pg_inherits i
                                            JOIN pg_class p ON p.oid = i.inhrelid
                                           WHERE i.inhparent = c.oid), 0))::bigint
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'herald' AND c.relname = ANY (\(names))
            """, logger: logger).decode((String, Int64).self) {
            rows[name] = estimate
        }
        return rows
    }

    /// `job_runs 2.99M, sms_verifications 2.88M, …` (rows, estimated).
    var description: String {
        Self.tables.map { "\($0) \(Self.format(rows[$0] ?? 0))" }.joined(separator: ", ")
    }

    static func format(_ n: Int64) -> String {
        switch n {
        case 1_000_000...: return String(format: "%.2fM", Double(n) / 1_000_000)
        case 1_000...: return String(format: "%.0fk", Double(n) / 1_000)
        default: return "\(n)"
        }
    }
}
