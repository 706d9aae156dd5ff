import AMQP
import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import HeraldWorkers
import Logging
import PostgresNIO

/// The cleanup suites' own database (`<test database>_cleanup`, made and migrated on first
/// use). Cleanup acts on whole tables (accounts, the policy row, the one active run), so its
/// tests must not share them with suites that run alongside: they get a database of their
/// own, and run serialized among themselves (``CleanupTests`` is `.serialized`; the
/// disruptive suite runs alone anyway).
final class CleanupDatabase: Sendable {
    static var url: String { TestEnvironment.databaseURL + "_cleanup" }

    let client: PostgresClient
    let logger: Logger
    private let task: Task<Void, Never>

    /// Connects, creating and migrating the database when needed.
    init() async throws {
        logger = TestEnvironment.logger("test.cleanup")
        try await Self.ensureDatabase(logger: logger)
        var configuration = DatabaseConfiguration(url: Self.url, maxConnections: 12)
        configuration.tls = .disable
        client = try Database.makeClient(configuration, logger: logger)
        let client = self.client
        task = Task { await client.run() }
        try await Migrator(client: client, groups: HeraldFleet.schema, logger: logger).migrate()
    }

    private static func ensureDatabase(logger: Logger) async throws {
        var admin = DatabaseConfiguration(url: TestEnvironment.databaseURL, maxConnections: 1)
        admin.tls = .disable
        let client = try Database.makeClient(admin, logger: logger)
        let task = Task { await client.run() }
        defer { task.cancel() }
        let name = String(url[url.index(after: url.lastIndex(of: "/")!)...])
        var exists = false
        for try await _ in try await client.query("SELECT 1 FROM pg_database WHERE datname = \(name)", logger: logger) { exists = true }
        guard !exists else { return }
        do {
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""), logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P04" || error.serverInfo?[.sqlState] == "23505" {
            // Created meanwhile by another process.
        }
    }

    func close() { task.cancel() }

    func configuration(namespace: String) -> HeraldConfiguration {
        var configuration = TestEnvironment.configuration(namespace: namespace)
        configuration.database = DatabaseConfiguration(url: Self.url, maxConnections: 8)
        configuration.database.tls = .disable
        return configuration
    }

    // MARK: - State

    /// No accounts, no active run, cleanup off with the default retention.
    func reset() async throws {
        try await client.query("TRUNCATE herald.accounts, herald.account_providers", logger: logger)
        try await client.query("""
            UPDATE herald.cleanup_runs SET status = 'cancelled', ended_at = now(), reason = 'test reset'
             WHERE status IN ('scheduled', 'running')
            """, logger: logger)
        try await client.query("""
            UPDATE herald.cleanup_policy SET enabled = false, enabled_at = NULL, retention = interval '30 days', updated_at = now(),
                   kept_enabled_at = NULL, kept_retention = NULL, kept_until = NULL
            """, logger: logger)
    }

    /// As if `days` passed: every time of the accounts and of the policy moves back by it.
    func travel(days: Double) async throws {
        try await client.query("""
            UPDATE herald.accounts SET created_at = created_at - make_interval(secs => \(days * 86_400)),
                   delete_after = delete_after - make_interval(secs => \(days * 86_400))
            """, logger: logger)
        try await client.query("""
            UPDATE herald.cleanup_policy SET enabled_at = enabled_at - make_interval(secs => \(days * 86_400)),
                   kept_enabled_at = kept_enabled_at - make_interval(secs => \(days * 86_400)),
                   kept_until = kept_until - make_interval(secs => \(days * 86_400))
            """, logger: logger)
    }

    /// Cleanup on since `enabledDaysAgo` days, with `retentionDays`.
    func enable(sinceDaysAgo enabledDaysAgo: Double, retentionDays: Double) async throws {
        try await client.query("""
            UPDATE herald.cleanup_policy SET enabled = true,
                   enabled_at = now() - make_interval(secs => \(enabledDaysAgo * 86_400)),
                   retention = make_interval(secs => \(retentionDays * 86_400)), updated_at = now(),
                   kept_enabled_at = NULL, kept_retention = NULL, kept_until = NULL
            """, logger: logger)
    }

    /// Inserts accounts created `ageDays` ago; linked ones get a provider (the trigger upgrades them).
    func insert(_ accounts: [GeneratedAccount]) async throws {
        let ids = accounts.map(\.id)
        let ages = accounts.map { $0.ageDays * 86_400 }
        let anonymous = accounts.map(\.anonymous)
        try await client.query("""
            INSERT INTO herald.accounts (id, created_at, is_anonymous)
            SELECT id, now() - make_interval(secs => age), anonymous
              FROM unnest(\(ids)::text[], \(ages)::float8[], \(anonymous)::bool[]) AS u(id, age, anonymous)
            """, logger: logger)
        let linked = accounts.filter(\.linked).map(\.id)
        if !linked.isEmpty {
            try await client.query("""
                INSERT INTO herald.account_providers (account_id, provider, provider_uid)
                SELECT id, 'google.com', 'g-' || id FROM unnest(\(linked)::text[]) AS u(id)
                """, logger: logger)
        }
    }

    /// Inserts `count` eligible accounts (`prefix-N`, 40 to 50 days old) under a policy that
    /// has been on for 60 days with a 30-day retention.
    func insertEligible(_ count: Int, prefix: String) async throws {
        try await client.query("""
            INSERT INTO herald.accounts (id, created_at)
            SELECT \(prefix) || '-' || g, now() - interval '40 days' - g * interval '1 second' FROM generate_series(1, \(count)) g
            """, logger: logger)
    }

    func accountIDs() async throws -> Set<String> {
        var out = Set<String>()
        for try await id in try await client.query("SELECT id FROM herald.accounts", logger: logger).decode(String.self) { out.insert(id) }
        return out
    }

    func count(_ sql: String) async throws -> Int {
        for try await count in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int.self) { return count }
        return 0
    }

    /// `account_id`s of the `account.deleted` events waiting in the outbox for `exchange`.
    func outboxAccountIDs(exchange: String) async throws -> [String] {
        var out: [String] = []
        for try await body in try await client.query("""
            SELECT body FROM herald.event_outbox WHERE exchange = \(exchange) AND name = 'account.deleted'
            """, logger: logger).decode(String.self) {
            let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            out.append(object?["account_id"] as? String ?? "?")
        }
        return out
    }

    func dropOutbox(exchange: String) async throws {
        try await client.query("DELETE FROM herald.event_outbox WHERE exchange = \(exchange)", logger: logger)
    }

    var runs: CleanupRunStore { CleanupRunStore(client: client, logger: logger) }

    /// Runs the handler the way the runner does, without a broker.
    func handle(_ job: CleanupRunJob, configuration: CleanupConfiguration, exchange: String) async throws -> JobOutcome {
        let handler = CleanupHandler(configuration: configuration, eventsExchange: exchange)
        let context = JobContext(envelope: JobEnvelope(messageID: "\(job.runID).1", typeName: CleanupRunJob.typeName),
                                 attempt: 1, mayBeRepeat: false, logger: logger, database: client)
        return try await handler.handle(job, context: context)
    }
}

/// One account of a generated population.
struct GeneratedAccount: Sendable {
    var id: String
    var ageDays: Double
    var anonymous: Bool
    var linked: Bool

    /// The rule, stated independently of the SQL: anonymous, never linked, and
    /// max(created, enabled) + retention in the past.
    func eligible(enabledDaysAgo: Double, retentionDays: Double) -> Bool {
        anonymous && !linked && min(ageDays, enabledDaysAgo) > retentionDays
    }
}

/// A queue bound to `account.deleted` on the namespace's events exchange.
struct DeletedEventsQueue {
    let name: String
    let connection: AMQPConnection

    init(harness: Harness) async throws {
        name = "\(harness.namespace).test.account-deleted"
        connection = harness.connection
        try await connection.declare(AMQPTopology(
            queues: [.init(name: name, arguments: ["x-queue-type": .string("classic")])],
            bindings: [.init(queue: name, exchange: harness.topology.eventsExchange, routingKey: AccountDeletedEvent.name)]))
    }

    /// One delivery of an `account.deleted` event.
    struct Event: Sendable, Hashable {
        var accountID: String
        /// The event's identity: a redelivery (at least once) carries the same one.
        var messageID: String
    }

    /// Takes every event waiting.
    func drain() async throws -> [Event] {
        var out: [Event] = []
        while let delivery = try await connection.get(queue: name) {
            let object = try JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any]
            out.append(Event(accountID: object?["account_id"] as? String ?? "?", messageID: delivery.properties.messageID ?? "?"))
            try await delivery.ack()
        }
        return out
    }

    /// Drains until `count` events arrived, then a little longer, so a duplicate would show.
    func collect(atLeast count: Int, timeout: Duration = .seconds(60)) async throws -> [Event] {
        let received = Received()
        try await eventually(timeout: timeout, "\(count) account.deleted events relayed") {
            received.add(try await drain())
            return received.ids.count >= count
        }
        try await Task.sleep(for: .milliseconds(500))
        received.add(try await drain())
        return received.ids
    }

    private final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var all: [Event] = []
        var ids: [Event] { lock.withLock { all } }
        func add(_ more: [Event]) { lock.withLock { all += more } }
    }

    func delete() async { try? await connection.deleteQueue(name) }
}
