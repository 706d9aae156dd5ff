import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldStubs
import HeraldWorkers
import Logging
import PostgresNIO
import Synchronization

/// Cleanup: `accounts` accounts, half of them eligible, bulk-loaded with generate_series;
/// `workers` in-process cleanup workers share one run (the handler's loop, no broker) with
/// the rate limit off, batches of `batchSize`, paced by `pace`. Next to it, in the same
/// invocation: the latency of single-row account updates (sign-ins) from `updaters`
/// concurrent clients, first without a run (baseline), then during the run; and the CPU the
/// run cost PostgreSQL and this process (where the workers run), from /proc.
struct CleanupBenchmark {
    var accounts: Int
    var workers: Int
    var batchSize: Int
    var pace: CleanupPace
    var updaters: Int = 4
    var baselineSeconds: Double = 5
    var configuration: HeraldConfiguration
    var logger: Logger

    struct Result {
        var accounts: Int
        var eligible: Int
        var deleted: Int
        var loadSeconds: Double
        var runSeconds: Double
        var baseline: Latencies
        var during: Latencies
        /// What the run row reports: its batches and the pauses its workers took.
        var batches: Int
        var pausedSeconds: Double
        /// CPU of the run (nil when /proc or the broker could not be read).
        var cpu: CPUUsage?
        var deletedPerSecond: Double { runSeconds > 0 ? Double(deleted) / runSeconds : 0 }
        var p99Ratio: Double { during.p99 / max(baseline.p99, 0.001) }
        /// PostgreSQL CPU per deleted account, in microseconds.
        var postgresMicrosecondsPerAccount: Double? { cpu.map { $0.postgres * 1e6 / Double(max(deleted, 1)) } }
    }

    struct Latencies {
        var count: Int
        var p50: Double
        var p99: Double
        var max: Double
    }

    func run() async throws -> Result {
        var database = configuration.database
        database.maxConnections = workers + updaters + 4
        let client = try Database.makeClient(database, logger: logger)
        let task = Task { await client.run() }
        defer { task.cancel() }
        try await Migrator(client: client, groups: HeraldFleet.schema, logger: logger).migrate()

        let loadStarted = ContinuousClock.now
        let eligible = try await load(client)
        let loadSeconds = (ContinuousClock.now - loadStarted).seconds

        let baseline = try await signIns(client, while: { started in (ContinuousClock.now - started).seconds < baselineSeconds })

        var settings = configuration.cleanup
        settings.rateLimitPerSecond = 0
        settings.batchSize = batchSize
        settings.pace = pace
        settings.maxAccountsPerRun = max(accounts, 1)
        let cleanup = settings
        let logger = self.logger
        let exchange = "\(configuration.amqp.namespace).events"
        let runs = CleanupRunStore(client: client, logger: logger)
        let runID = CleanupScheduler.newRunID()
        _ = try await runs.create(id: runID, dryRun: false, maxAccounts: cleanup.maxAccountsPerRun, fanOut: workers)
        let done = Atomic(false)
        let meter = try? CPUMeter.start()
        let runStarted = ContinuousClock.now
        async let during = signIns(client, while: { _ in !done.load(ordering: .relaxed) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    _ = try await runs.join(runID)
                    _ = try await CleanupRunner(client: client, configuration: cleanup, eventsExchange: exchange, logger: logger).work(runID: runID)
                }
            }
            try await group.waitForAll()
        }
        let runSeconds = (ContinuousClock.now - runStarted).seconds
        done.store(true, ordering: .relaxed)
        let cpu = try? meter?.stop()
        let duringRun = try await during
        let run = try await runs.get(runID)
        try await client.query("DELETE FROM herald.event_outbox WHERE exchange = \(exchange)", logger: logger)
        return Result(accounts: accounts, eligible: eligible, deleted: run?.accountsDeleted ?? 0, loadSeconds: loadSeconds, runSeconds: runSeconds,
                      baseline: baseline, during: duringRun, batches: run?.batches ?? 0,
                      pausedSeconds: Double(run?.pausedMilliseconds ?? 0) / 1000, cpu: cpu)
    }

    /// A fresh population: ids `b1…bN`; odd ones anonymous and 31 to 90 days old (eligible);
    /// of the even ones a third young anonymous, a third old and linked, a third old members.
    private func load(_ client: PostgresClient) async throws -> Int {
        try await client.query("TRUNCATE herald.accounts, herald.account_providers", logger: logger)
        try await client.query("UPDATE herald.cleanup_runs SET status = 'cancelled', ended_at = now() WHERE status IN ('scheduled', 'running')", logger: logger)
        try await client.query("""
            UPDATE herald.cleanup_policy SET enabled = true, enabled_at = now() - interval '60 days', retention = interval '30 days'
            """, logger: logger)
        try await client.query("""
            INSERT INTO herald.accounts (id, created_at, is_anonymous, last_sign_in_at)
            SELECT 'b' || g,
                   CASE WHEN g % 2 = 1 THEN now() - interval '31 days' - (g % 5000) * interval '17 minutes'
                        WHEN g % 6 = 0 THEN now() - (g % 20) * interval '1 day'
                        ELSE now() - interval '40 days' - (g % 500) * interval '1 hour' END,
                   g % 2 = 1 OR g % 6 = 0 OR g % 6 = 2,
                   now() - interval '1 day'
              FROM generate_series(1, \(accounts)) g
            """, logger: logger)
        // Statistics before the links: the link trigger's UPDATE of the account by id would
        // otherwise keep a plan made for the truncated (empty) table, a scan per link.
        try await client.query("ANALYZE herald.accounts", logger: logger)
        try await client.query("""
            INSERT INTO herald.account_providers (account_id, provider, provider_uid)
            SELECT 'b' || g, 'google.com', 'g' || g FROM generate_series(2, \(accounts), 6) g
            """, logger: logger)
        try await client.query("VACUUM ANALYZE herald.accounts", logger: logger)
        try await client.query("VACUUM ANALYZE herald.account_providers", logger: logger)
        return try await CleanupEligibility.count(client: client, logger: logger).count
    }

    /// `updaters` clients each updating one random account at a time while `going` holds.
    private func signIns(_ client: PostgresClient, while going: @escaping @Sendable (ContinuousClock.Instant) -> Bool) async throws -> Latencies {
        let (accounts, logger) = (self.accounts, self.logger)
        let started = ContinuousClock.now
        let all = try await withThrowingTaskGroup(of: [Duration].self) { group in
            for _ in 0..<updaters {
                group.addTask {
                    var latencies: [Duration] = []
                    while going(started) {
                        let id = "b\(Int.random(in: 1...accounts))"
                        let begin = ContinuousClock.now
                        try await client.query("UPDATE herald.accounts SET last_sign_in_at = now() WHERE id = \(id)", logger: logger)
                        latencies.append(.now - begin)
                    }
                    return latencies
                }
            }
            var out: [Duration] = []
            for try await part in group { out += part }
            return out
        }
        let sorted = all.sorted()
        func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))].milliseconds }
        return Latencies(count: sorted.count, p50: percentile(0.5), p99: percentile(0.99), max: sorted.last?.milliseconds ?? 0)
    }
}
