import AMQP
import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import HeraldWorkers
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing

/// A test's own namespace on the real broker and database: topology declared, a client to
/// enqueue, and helpers to read the ledger and queues. ``close()`` deletes the namespace.
final class Harness: Sendable {
    let namespace: String
    let configuration: HeraldConfiguration
    let topology: HeraldTopology
    let connection: AMQPConnection
    let database: PostgresClient
    let client: HeraldClient
    let logger: Logger
    /// Numbers of this test's SMS jobs: `phonePrefix` and three digits. Unique per test, so
    /// re-entrancy and rate limits (kept in the shared database) never join two tests.
    let phonePrefix: String
    private let databaseTask: Task<Void, Never>
    /// What ``close()`` undoes first, newest first: running workers, fixtures.
    private let closers = Mutex<[@Sendable () async -> Void]>([])

    init(retryDelays: [Int] = [100, 200, 400], maxAttempts: Int = 3) async throws {
        namespace = TestEnvironment.namespace()
        configuration = TestEnvironment.configuration(namespace: namespace, retryDelays: retryDelays, maxAttempts: maxAttempts)
        topology = HeraldTopology(configuration.amqp, configuration.runner)
        logger = TestEnvironment.logger("test.\(namespace)")
        database = try Database.makeClient(configuration.database, logger: logger)
        let database = self.database
        databaseTask = Task { await database.run() }
        try await Migrator(client: database, groups: HeraldFleet.schema, logger: logger).migrate()
        phonePrefix = try await Self.unusedPhonePrefix(database, logger: logger)
        connection = AMQPConnection(configuration: try configuration.amqp.connectionConfiguration(name: "test"), topology: topology.all, logger: logger)
        connection.start()
        try await connection.waitUntilConnected(timeout: .seconds(30))
        try await connection.declare(topology.all)
        client = HeraldClient(connection: connection, namespace: namespace)
    }

    /// A random number prefix no earlier test used in this database: the database outlives the
    /// runs (a developer's `herald_test` keeps every run's codes, verifications and rate counters),
    /// so a random prefix alone met an old test's counters once in a while (2026-12-07: a test
    /// number's "no quota taken" found another run's three counters).
    private static func unusedPhonePrefix(_ database: PostgresClient, logger: Logger) async throws -> String {
        for _ in 0..<20 {
            let prefix = "+4917" + String(format: "%06d", Int.random(in: 0..<1_000_000))
            let pattern = prefix + "%"
            let rows = try await database.query("""
                SELECT EXISTS (SELECT 1 FROM herald.sms_verifications WHERE phone_number LIKE \(pattern))
                    OR EXISTS (SELECT 1 FROM herald.sms_rate_counters WHERE key LIKE \(pattern))
                """, logger: logger)
            for try await used in rows.decode(Bool.self) where !used { return prefix }
        }
        throw TestFailure("no unused phone prefix in 20 tries")
    }

    /// Runs a worker in-process, assembled exactly as a worker executable assembles it
    /// (its own database pool and broker connection), minus the HTTP endpoint.
    func startRunner<H: JobHandler>(_ kind: JobKind, _ handler: H, configure: (inout HeraldConfiguration) -> Void = { _ in }) async throws -> RunningWorker {
        var configuration = self.configuration
        configure(&configuration)
        let worker = try WorkerServices(kind: kind, handler: handler, configuration: configuration, connectionName: "test-runner", logger: logger)
        let group = worker.serviceGroup(logger: logger)
        let task = Task { try await group.run() }
        let running = RunningWorker(group: group, task: task, health: worker.health, connection: worker.connection)
        onClose { try? await running.stop() }
        try await worker.connection.waitUntilConnected(timeout: .seconds(30))
        return running
    }

    /// Registers something ``close()`` undoes before the namespace goes (a fixture, a worker).
    func onClose(_ closer: @escaping @Sendable () async -> Void) {
        closers.withLock { $0.append(closer) }
    }

    func enqueue<J: HeraldJob>(_ job: J, messageID: String = UUID().uuidString.lowercased()) async throws -> String {
        try await client.enqueue(job, messageID: messageID)
    }

    func sms(_ n: Int = 0) -> SMSVerificationJob {
        SMSVerificationJob(verificationID: "\(namespace)-v\(n)", phoneNumber: phone(n), locale: "en")
    }

    /// A client IPv6 address in this namespace's own /48 of the unique-local range (fd00::/8):
    /// `network` picks the /64 inside it, `host` the address inside that /64.
    func clientIP(network: Int = 0, host: Int = 1) -> String {
        let digits = Array(namespace.filter(\.isHexDigit).lowercased() + "0000000000")
        func group(_ range: Range<Int>) -> String { String(digits[range]) }
        return "fd\(group(0..<2)):\(group(2..<6)):\(group(6..<10)):\(String(network, radix: 16))::\(String(host, radix: 16))"
    }

    func phone(_ n: Int) -> String {
        phonePrefix + String(format: "%03d", n % 1000)
    }

    /// (status, attempts) of a message in the ledger, nil if never claimed.
    func ledger(_ messageID: String) async throws -> (String, Int)? {
        let (database, logger) = (self.database, self.logger)
        return try await withDeadline(.seconds(5)) {
            let rows = try await database.query("SELECT status, attempts FROM herald.job_runs WHERE message_id = \(messageID)", logger: logger)
            for try await row in rows.decode((String, Int).self) { return row }
            return nil
        }
    }

    func statuses(_ ids: [String]) async throws -> [String: String] {
        let (database, logger) = (self.database, self.logger)
        return try await withDeadline(.seconds(5)) {
            let rows = try await database.query("SELECT message_id, status FROM herald.job_runs WHERE message_id = ANY(\(ids)::text[])", logger: logger)
            var out: [String: String] = [:]
            for try await (id, status) in rows.decode((String, String).self) { out[id] = status }
            return out
        }
    }

    func outboxCount(_ ids: [String]) async throws -> Int {
        let (database, logger) = (self.database, self.logger)
        return try await withDeadline(.seconds(5)) {
            let rows = try await database.query("SELECT count(*)::bigint FROM herald.dev_outbox WHERE message_id = ANY(\(ids)::text[])", logger: logger)
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
    }

    func depth(_ queue: String) async throws -> Int {
        try await connection.queueState(queue)?.messageCount ?? -1
    }

    /// Takes every dead letter of `kind` off its queue.
    func drainDeadLetters(_ kind: JobKind) async throws -> [AMQPDelivery] {
        var out: [AMQPDelivery] = []
        while let delivery = try await connection.get(queue: topology.deadLetterQueue(kind)) {
            out.append(delivery)
            try await delivery.ack()
        }
        return out
    }

    /// Stops what the test started through the harness, then deletes the namespace. Tests do
    /// not call it: ``withHarness(retryDelays:maxAttempts:_:)`` does, whatever the body threw.
    func close() async {
        for closer in closers.withLock({ $0.reversed() }) { await closer() }
        for queue in topology.all.queues { try? await connection.deleteQueue(queue.name) }
        for exchange in topology.all.exchanges { try? await connection.deleteExchange(exchange.name) }
        await connection.close()
        databaseTask.cancel()
    }
}

/// Runs `body` with a fresh ``Harness`` and always closes it (and what was started through
/// it), whether the body returns or throws.
func withHarness<T>(retryDelays: [Int] = [100, 200, 400], maxAttempts: Int = 3, _ body: (Harness) async throws -> T) async throws -> T {
    let harness = try await Harness(retryDelays: retryDelays, maxAttempts: maxAttempts)
    do {
        let result = try await body(harness)
        await harness.close()
        return result
    } catch {
        await harness.close()
        throw error
    }
}

/// ``withHarness(retryDelays:maxAttempts:_:)`` for a receipt that can come before herald-sms has
/// committed its send (a stub posts it as soon as it took the message): the receipt job waits in
/// the delay queues about 3 s before its last attempt, where the default's three tries span 0.3 s
/// and can run out on a loaded machine.
func withReceiptHarness<T>(_ body: (Harness) async throws -> T) async throws -> T {
    try await withHarness(retryDelays: [200, 400, 800, 1_600], maxAttempts: 5, body)
}

/// An in-process worker; ``stop()`` triggers the graceful shutdown a SIGTERM would.
struct RunningWorker: Sendable {
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let health: HealthState
    let connection: AMQPConnection

    /// Graceful shutdown, as SIGTERM does. A group that has not stopped a minute later (its
    /// graceful part is bounded; the cancelled services are not, in-process) is a failure of
    /// the test, recorded, and left behind rather than waited on for ever.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        // Awaiting `task.value` cannot be abandoned, so another task awaits it and says when.
        let stopped = StoppedFlag()
        Task { [task] in
            _ = try? await task.value
            stopped.value.withLock { $0 = true }
        }
        do {
            try await eventually(timeout: .seconds(60), every: .milliseconds(20), "the worker's services to stop after a graceful shutdown") {
                stopped.value.withLock { $0 }
            }
        } catch {
            Issue.record("the worker's services did not stop within 60 s of a graceful shutdown")
            return
        }
        try await task.value
    }
}

private final class StoppedFlag: Sendable {
    let value = Mutex(false)
}

/// Records how often each message was handled; fails transiently on demand.
final class CountingHandler: JobHandler, @unchecked Sendable {
    typealias Job = SMSVerificationJob
    private let lock = NSLock()
    private var calls: [String: [ContinuousClock.Instant]] = [:]
    private var failing: Bool
    let delay: Duration

    init(failing: Bool = false, delay: Duration = .zero) {
        self.failing = failing
        self.delay = delay
    }

    func setFailing(_ value: Bool) { lock.withLock { failing = value } }
    func count(_ id: String) -> Int { lock.withLock { calls[id]?.count ?? 0 } }
    func times(_ id: String) -> [ContinuousClock.Instant] { lock.withLock { calls[id] ?? [] } }
    var total: Int { lock.withLock { calls.values.reduce(0) { $0 + $1.count } } }

    func handle(_ job: SMSVerificationJob, context: JobContext) async throws -> JobOutcome {
        let shouldFail = lock.withLock { () -> Bool in
            calls[context.envelope.messageID, default: []].append(.now)
            return failing
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        if shouldFail { throw JobFailure.transient("provider answered 503") }
        return try await DevOutboxHandler<SMSVerificationJob>(configuration: .init(), recipient: { Redact.phone($0.phoneNumber) }).handle(job, context: context)
    }
}
