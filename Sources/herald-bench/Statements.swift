import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// One statement of pg_stat_statements over a run.
struct StatementStats: Sendable {
    var query: String
    var calls: Int
    var totalMilliseconds: Double
    var meanMilliseconds: Double
}

/// BENCH_STATEMENTS=1: pg_stat_statements in the bench database. Reset before each SMS run,
/// read after it (the top statements by total execution time). Statements inside functions
/// (sms_prepare's upserts) are counted too: `pg_stat_statements.track = all` is set on the
/// bench database for the runs (new connections take it) and reset at the end. Needs the
/// library preloaded (scripts/services.sh adds it; a server started before needs a restart).
final class BenchStatements: Sendable {
    private let client: PostgresClient
    private let task: Task<Void, Never>
    private let logger: Logger
    private let database: String
    static let top = 12

    init(configuration: DatabaseConfiguration, logger: Logger) async throws {
        var settings = configuration
        settings.maxConnections = 2
        let client = try Database.makeClient(settings, logger: logger)
        let task = Task { await client.run() }
        self.client = client
        self.logger = logger
        self.task = task
        var loaded = ""
        for try await value in try await client.query("SELECT current_setting('shared_preload_libraries')", logger: logger).decode(String.self) { loaded = value }
        guard loaded.contains("pg_stat_statements") else {
            task.cancel()
            throw BenchFailure("BENCH_STATEMENTS=1: pg_stat_statements is not loaded (shared_preload_libraries = '\(loaded)'). scripts/services.sh configures it; the running PostgreSQL was started before: restart it (make stop && make bench)")
        }
        try await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", logger: logger)
        var name = ""
        for try await value in try await client.query("SELECT current_database()", logger: logger).decode(String.self) { name = value }
        database = name
        try await client.query("ALTER DATABASE \(unescaped: "\"" + name + "\"") SET pg_stat_statements.track = 'all'", logger: logger)
    }

    func reset() async throws {
        try await client.query("SELECT pg_stat_statements_reset()", logger: logger)
    }

    /// The top statements of this database since the last reset, by total execution time.
    func read() async throws -> [StatementStats] {
        var rows: [StatementStats] = []
        let query: PostgresQuery = """
            SELECT query, calls, total_exec_time, mean_exec_time FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND query NOT LIKE '%pg_stat_statements%'
            ORDER BY total_exec_time DESC LIMIT \(Self.top)
            """
        for try await (text, calls, total, mean) in try await client.query(query, logger: logger).decode((String, Int, Double, Double).self) {
            rows.append(StatementStats(query: text, calls: calls, totalMilliseconds: total, meanMilliseconds: mean))
        }
        return rows
    }

    /// Back to the server's default tracking, and the connection closed.
    func close() async {
        _ = try? await client.query("ALTER DATABASE \(unescaped: "\"" + database + "\"") RESET pg_stat_statements.track", logger: logger)
        task.cancel()
    }

    /// The table printed after a run: total, calls, mean and calls per job, the query on one line.
    static func print(_ rows: [StatementStats], run: String, jobs: Int) {
        Swift.print("\npg_stat_statements, \(run) (\(jobs) jobs; top \(top) by total time):")
        Swift.print(pad("total ms", 11) + pad("calls", 9) + pad("mean ms", 10) + pad("calls/job", 11) + "statement")
        for row in rows {
            let text = row.query.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            Swift.print(pad(String(format: "%.0f", row.totalMilliseconds), 11) + pad(String(row.calls), 9)
                        + pad(String(format: "%.3f", row.meanMilliseconds), 10) + pad(String(format: "%.2f", Double(row.calls) / Double(max(jobs, 1))), 11)
                        + String(text.prefix(110)) + (text.count > 110 ? "…" : ""))
        }
    }
}
