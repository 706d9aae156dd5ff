import Foundation
import HeraldClient
import HeraldRuntime
import HeraldWorkers
import Logging
import PostgresNIO

/// herald-sms on an empty database, as a fresh deployment's first burst finds it (issue 31).
/// Each pooled connection plans the SMS functions' statements once (generic plans) and keeps
/// the plans until a table they read is analyzed, so the plans the first jobs make on empty
/// tables are the ones the burst runs on. The cold row is 1 in-process worker's first `count`
/// jobs on a database created and migrated just before (never analyzed, as `heraldctl migrate`
/// leaves it). The warm row next to it is the next `count` jobs on the same database, analyzed
/// in between as autovacuum would have done by then, through a new worker: new connections,
/// whose plans see the rows of the first run. The database (`<bench database>_cold`) is
/// dropped after, whatever happens. `controls`: both runs with the abuse controls on
/// (``SMSControls``).
func smsColdAndWarm(count: Int, controls: Bool, configuration base: HeraldConfiguration, logger: Logger) async throws -> [BenchResult] {
    try await ColdDatabase.with(base, logger: logger) { cold, configuration in
        let suffix = controls ? ", controls on" : ""
        var first = try await smsEndToEnd(count: count, workers: 1, controls: controls, configuration: configuration, logger: logger)
        first.name = "herald-sms, 1 worker\(suffix), cold: empty db"
        try await cold.analyze()
        var next = try await smsEndToEnd(count: count, workers: 1, controls: controls, configuration: configuration, logger: logger)
        next.name = "herald-sms, 1 worker\(suffix), warm: next \(count)"
        return [first, next]
    }
}

/// A launch that starts slowly, as the issue measured it: on an empty database, `trickle` jobs
/// in groups of 20, 5 s apart (a new worker each, so its connections plan again), long enough
/// for autovacuum's pass (`autovacuum_naptime`, 1 min) to find the tables with a few hundred
/// rows; then `count` jobs at once through a new worker, the row. Before issue 31 the pass
/// analyzed the SMS tables at those rows and the burst ran on plans made for them.
func smsColdAfterTrickle(count: Int, trickle: Int, controls: Bool, configuration base: HeraldConfiguration, logger: Logger) async throws -> BenchResult {
    try await ColdDatabase.with(base, logger: logger) { _, configuration in
        let started = ContinuousClock.now
        for _ in 0..<max(trickle / 20, 1) {
            _ = try await smsEndToEnd(count: 20, workers: 1, controls: controls, configuration: configuration, logger: logger)
            try await Task.sleep(for: .seconds(5))
        }
        let seconds = (ContinuousClock.now - started).components.seconds
        var burst = try await smsEndToEnd(count: count, workers: 1, controls: controls, configuration: configuration, logger: logger)
        burst.name = "herald-sms, 1 worker\(controls ? ", controls on" : ""), cold: after \(trickle) jobs in \(seconds) s"
        return burst
    }
}

/// A database of its own next to the bench database, for ``smsColdAndWarm`` and
/// ``smsColdAfterTrickle``: created (dropped
/// first if an interrupted run left it), migrated with every schema group, dropped.
struct ColdDatabase: Sendable {
    let name: String
    /// The bench database's settings with the cold database's URL.
    let configuration: DatabaseConfiguration
    private let bench: DatabaseConfiguration
    private let logger: Logger

    /// `<bench database>_<suffix>`.
    init(bench: DatabaseConfiguration, suffix: String = "cold", logger: Logger) throws {
        guard var components = URLComponents(string: bench.url) else { throw BenchFailure("\(suffix) database: cannot read \(bench.url)") }
        let benchName = components.path.drop { $0 == "/" }
        name = (benchName.isEmpty ? "herald" : String(benchName)) + "_" + suffix
        components.path = "/" + name
        guard let url = components.string else { throw BenchFailure("\(suffix) database: cannot make its URL from \(bench.url)") }
        var configuration = bench
        configuration.url = url
        self.configuration = configuration
        self.bench = bench
        self.logger = logger
    }

    /// `body` with a new cold database, created and migrated (no ANALYZE), and `base` pointed
    /// at it; dropped afterwards, whatever happens.
    static func with<T>(_ base: HeraldConfiguration, logger: Logger,
                        _ body: (ColdDatabase, HeraldConfiguration) async throws -> T) async throws -> T {
        let cold = try ColdDatabase(bench: base.database, logger: logger)
        try await cold.create()
        do {
            try await cold.migrate()
            var configuration = base
            configuration.database = cold.configuration
            let result = try await body(cold, configuration)
            try await cold.drop()
            return result
        } catch {
            try? await cold.drop()
            throw error
        }
    }

    func create() async throws {
        try await admin("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
        try await admin("CREATE DATABASE \"\(name)\"")
    }

    /// Creates it unless it exists (a database kept between invocations).
    func createIfAbsent() async throws {
        do {
            try await admin("CREATE DATABASE \"\(name)\"")
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P04" {
            // There already.
        }
    }

    func drop() async throws {
        try await admin("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
    }

    /// As `heraldctl migrate` does it: no ANALYZE after (empty tables analyzed are planned as
    /// one-page tables, which is worse).
    func migrate() async throws {
        try await withClient(configuration) { try await Migrator(client: $0, groups: HeraldFleet.schema, logger: logger).migrate() }
    }

    /// Statistics for every table, as autovacuum takes them once enough rows changed.
    func analyze() async throws {
        try await withClient(configuration) { try await $0.query("ANALYZE", logger: logger) }
    }

    /// CREATE and DROP DATABASE, from a connection to the bench database.
    private func admin(_ sql: String) async throws {
        try await withClient(bench) { try await $0.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
    }

    /// `body` with a client of one connection to the database `settings` name, closed after.
    @discardableResult
    func withClient<T>(_ settings: DatabaseConfiguration, _ body: (PostgresClient) async throws -> T) async throws -> T {
        var settings = settings
        settings.maxConnections = 1
        let client = try Database.makeClient(settings, logger: logger)
        let task = Task { await client.run() }
        defer { task.cancel() }
        return try await body(client)
    }
}
