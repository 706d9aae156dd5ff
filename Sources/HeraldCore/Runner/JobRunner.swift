import AMQP
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The pipeline every worker shares: decode → validate → claim → handle → commit → ack.
///
/// - invalid input is dead-lettered at once with an `x-herald-reason` header;
/// - a transient failure goes to a delay queue and comes back, until `max_attempts`, then
///   it is dead-lettered;
/// - a rejection is recorded and acked, its events emitted;
/// - a message whose outcome is already committed is acked without running again;
/// - while the database is unreachable, deliveries are held (never acked, never
///   dead-lettered), so the prefetch fills and the worker stops taking new ones.
///
/// Handlers run concurrently up to the prefetch. On graceful shutdown the consumer is
/// cancelled, in-flight jobs get `drain_timeout_seconds` to finish, the rest are requeued.
public final class JobRunner<Handler: JobHandler>: Service, Sendable {
    public struct Dependencies: Sendable {
        public var connection: AMQPConnection
        public var database: PostgresClient
        public var health: HealthState
        public var ownerKey: Int64
        public var relay: EventRelay?

        public init(connection: AMQPConnection, database: PostgresClient, health: HealthState, ownerKey: Int64, relay: EventRelay?) {
            self.connection = connection
            self.database = database
            self.health = health
            self.ownerKey = ownerKey
            self.relay = relay
        }
    }

    let kind: JobKind
    let handler: Handler
    let deps: Dependencies
    let topology: HeraldTopology
    let configuration: RunnerConfiguration
    let prefetch: Int
    let operationTimeout: Duration
    let logger: Logger
    let metrics: RunnerMetrics
    let decoder: JobDecoder<Handler.Job>
    let ledger: JobLedger
    let committer: OutcomeCommitter
    let claims: GroupBatcher<JobLedger.ClaimRequest, JobLedger.Claim>
    private let inFlight = Mutex(0)
    /// Signalled when the last in-flight job finishes.
    private let idle = WakeSignal()

    public init(kind: JobKind, handler: Handler, dependencies: Dependencies, topology: HeraldTopology, configuration: RunnerConfiguration, prefetch: Int, operationTimeout: Duration = .seconds(15), logger: Logger) {
        self.operationTimeout = operationTimeout
        self.kind = kind
        self.handler = handler
        self.deps = dependencies
        self.topology = topology
        self.configuration = configuration
        self.prefetch = prefetch
        self.logger = logger
        self.metrics = RunnerMetrics(queue: kind.rawValue)
        self.decoder = JobDecoder(maxBytes: configuration.maxMessageBytes)
        self.ledger = JobLedger(client: dependencies.database, logger: logger)
        let (ledger, queue, ownerKey, lease) = (self.ledger, kind.rawValue, dependencies.ownerKey, configuration.leaseSeconds)
        self.claims = GroupBatcher(maxBatch: configuration.outcomeBatchSize, timeout: operationTimeout) { requests in
            try await ledger.claim(requests, queue: queue, ownerKey: ownerKey, leaseSeconds: lease).map { .success($0) }
        }
        self.committer = OutcomeCommitter(client: dependencies.database, eventsExchange: topology.eventsExchange, maxBatch: configuration.outcomeBatchSize,
                                          timeout: operationTimeout, metrics: metrics, logger: logger)
    }

    public func run() async throws {
        // Claims carry this worker's owner key. Until its presence lock is held, another
        // claim of the same message would take the job over as a dead worker's, so a
        // duplicate delivered at start-up would run twice: consume only once it is held.
        while !deps.health.presenceHeld {
            if Task.isCancelledOrShuttingDown { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let consumer = deps.connection.consume(queue: topology.workQueue(kind), prefetch: UInt16(clamping: prefetch))
        logger.info("consuming", metadata: ["queue": "\(topology.workQueue(kind))", "prefetch": "\(prefetch)"])
        await withGracefulShutdownHandler {
            // Discarding: a finished job leaves nothing behind in the group.
            await withDiscardingTaskGroup { group in
                for await delivery in consumer {
                    inFlight.withLock { $0 += 1 }
                    group.addTask {
                        await self.process(delivery)
                        if self.inFlight.withLock({ $0 -= 1; return $0 }) == 0 { self.idle.signal() }
                    }
                }
                if await !drained() { group.cancelAll() }
            }
        } onGracefulShutdown: {
            self.deps.health.draining = true
            Task { await consumer.cancel() }
        }
        logger.info("runner stopped", metadata: ["queue": "\(topology.workQueue(kind))"])
    }

    /// After the consumer ends: waits for in-flight jobs up to the drain timeout. False when
    /// some are left; the caller cancels them (a cancelled job is requeued, never acked half-done).
    private func drained() async -> Bool {
        let left = inFlight.withLock { $0 }
        guard left > 0 else { return true }
        logger.info("draining in-flight jobs", metadata: ["count": "\(left)", "timeout_s": "\(configuration.drainTimeoutSeconds)"])
        let deadline = ContinuousClock.now + .seconds(configuration.drainTimeoutSeconds)
        while inFlight.withLock({ $0 }) > 0 {
            let remaining = deadline - .now
            guard remaining > .zero else {
                logger.warning("drain timeout; requeueing unfinished jobs", metadata: ["count": "\(inFlight.withLock { $0 })"])
                return false
            }
            await idle.wait(timeout: remaining)
        }
        return true
    }

    // MARK: - One delivery

    func process(_ delivery: AMQPDelivery) async {
        let started = ContinuousClock.now
        let gauge = metrics.inFlight
        gauge.increment()
        defer { gauge.decrement() }

        let envelope: JobEnvelope
        let job: Handler.Job
        switch decoder.decode(body: delivery.body, properties: delivery.properties) {
        case .failure(let error):
            logger.warning("invalid job dead-lettered", metadata: ["reason": "\(error.reason)", "message_id": "\(JobDecoder<Handler.Job>.printable(delivery.properties.messageID ?? "-"))"])
            await deadLetter(delivery, reason: error.reason, category: "invalid", attempts: 0)
            metrics.job(Handler.Job.typeName, outcome: "invalid")
            return
        case .success(let decoded):
            (envelope, job) = decoded
        }

        var logger = self.logger
        logger[metadataKey: "message_id"] = "\(envelope.messageID)"
        if let correlation = envelope.correlationID { logger[metadataKey: "correlation_id"] = "\(JobDecoder<Handler.Job>.printable(correlation))" }
        let type = envelope.typeName

        let claim: JobLedger.Claim
        let token = UUID().uuidString
        do {
            let request = JobLedger.ClaimRequest(messageID: envelope.messageID, jobType: type, token: token)
            claim = try await untilDatabase(logger) { try await self.claims.submit(request) }
        } catch {
            await requeue(delivery, logger, because: error)
            return
        }

        switch claim {
        case .finished(let status):
            logger.debug("duplicate delivery acked", metadata: ["status": "\(status)"])
            await ack(delivery, logger)
            metrics.job(type, outcome: "duplicate")
        case .busy:
            // A live worker runs the same message_id now: look again after the first delay.
            await delay(delivery, tier: 0, attempt: 0, reason: "in progress elsewhere", logger)
            metrics.job(type, outcome: "deferred")
        case .claimed(let attempt, let tookOver):
            if tookOver {
                // Its worker died mid-job: the side effect may have happened (counted, bounded).
                metrics.takeover()
                logger.warning("took over a job whose worker died", metadata: ["attempt": "\(attempt)"])
            }
            if attempt > configuration.maxAttempts {
                // A job that kills its worker every time must not loop forever.
                let reason = "gave up after \(attempt - 1) attempts without an outcome (the worker stopped each time)"
                await deadLetter(delivery, reason: reason, category: "exhausted", attempts: attempt - 1)
                await recordDead(envelope.messageID, reason: reason, logger)
                metrics.job(type, outcome: "dead_lettered")
                return
            }
            await run(job, delivery: delivery, envelope: envelope, attempt: attempt, started: started, logger: logger)
        }
    }

    private func run(_ job: Handler.Job, delivery: AMQPDelivery, envelope: JobEnvelope, attempt: Int, started: ContinuousClock.Instant, logger: Logger) async {
        let type = envelope.typeName
        let context = JobContext(envelope: envelope, attempt: attempt, mayBeRepeat: attempt > 1 || delivery.redelivered, logger: logger, database: deps.database, ownerKey: deps.ownerKey)
        do {
            let outcome = try await handleHoldingForDatabase(job, context: context, logger: logger)
            let finished = JobLedger.Finished(messageID: envelope.messageID, status: outcome.status.rawValue, reason: outcome.reason)
            do {
                try await untilDatabase(logger) { try await self.committer.commit(finished, events: outcome.events, write: outcome.write) }
            } catch is CancellationError {
                await requeue(delivery, logger, because: CancellationError())
                return
            } catch {
                throw JobFailure.transient("the outcome could not be recorded (\(Self.describe(error)))")
            }
            if !outcome.events.isEmpty { deps.relay?.poke() }
            await ack(delivery, logger)
            metrics.job(type, outcome: outcome.status.rawValue)
            metrics.duration(type, ContinuousClock.now - started)
        } catch let failure as JobFailure {
            switch failure {
            case .invalid(let reason):
                logger.warning("job refused as invalid; dead-lettered", metadata: ["reason": "\(reason)"])
                await deadLetter(delivery, reason: reason, category: "invalid", attempts: attempt)
                await recordDead(envelope.messageID, reason: reason, logger)
                metrics.job(type, outcome: "invalid")
            case .transient(let reason):
                await retryOrGiveUp(delivery, messageID: envelope.messageID, type: type, attempt: attempt, reason: reason, logger)
            }
        } catch {
            if Task.isCancelled {
                await requeue(delivery, logger, because: error)
            } else {
                await retryOrGiveUp(delivery, messageID: envelope.messageID, type: type, attempt: attempt, reason: "unexpected error (\(Self.describe(error)))", logger)
            }
        }
    }

    /// Runs the handler; when it loses the database (a handler's own reads and writes), the
    /// job is held until the database answers again and the handler runs again, so an
    /// outage never turns into a retry that counts or a dead letter. A handler's database
    /// steps are idempotent for this reason. Three holds in a row that find the database
    /// reachable at once mean the error is the handler's own: it is thrown.
    private func handleHoldingForDatabase(_ job: Handler.Job, context: JobContext, logger: Logger) async throws -> JobOutcome {
        var spurious = 0
        while true {
            do {
                return try await handler.handle(job, context: context)
            } catch where !(error is JobFailure) && DatabaseAvailability.isUnavailable(error) && !(error is CancellationError) && !Task.isCancelled && spurious < 3 {
                logger.warning("the handler lost the database; holding the job until it returns", metadata: ["error": "\(Self.describe(error))"])
                let started = ContinuousClock.now
                let database = deps.database
                try await untilDatabase(logger) { try await database.query("SELECT 1", logger: logger); return true }
                spurious = ContinuousClock.now - started < .milliseconds(50) ? spurious + 1 : 0
            }
        }
    }

    private func retryOrGiveUp(_ delivery: AMQPDelivery, messageID: String, type: String, attempt: Int, reason: String, _ logger: Logger) async {
        if attempt >= configuration.maxAttempts {
            let final = "gave up after \(attempt) attempts: \(reason)"
            logger.warning("job dead-lettered", metadata: ["reason": "\(final)"])
            await deadLetter(delivery, reason: final, category: "exhausted", attempts: attempt)
            await recordDead(messageID, reason: final, logger)
            metrics.job(type, outcome: "dead_lettered")
            return
        }
        do {
            try await untilDatabase(logger) { try await self.ledger.markRetrying(messageID: messageID, reason: reason) }
        } catch {
            await requeue(delivery, logger, because: error)
            return
        }
        let tier = topology.retryTier(afterAttempt: attempt)
        logger.info("job will be retried", metadata: ["attempt": "\(attempt)", "tier": "\(tier + 1)", "reason": "\(reason)"])
        await delay(delivery, tier: tier, attempt: attempt, reason: reason, logger)
        metrics.retry(tier: tier + 1)
        metrics.job(type, outcome: "retried")
    }

    // MARK: - Broker side

    /// Re-publishes the message to delay tier `tier`, then acks the original.
    private func delay(_ delivery: AMQPDelivery, tier: Int, attempt: Int, reason: String, _ logger: Logger) async {
        var properties = delivery.properties
        properties.persistent = true
        properties.headers["x-herald-attempt"] = .int(Int64(attempt))
        properties.headers["x-herald-last-error"] = .string(reason)
        properties.headers["x-herald-routing-key"] = .string(Self.originalRoutingKey(delivery))
        do {
            try await deps.connection.publish(body: delivery.body, exchange: "", routingKey: topology.retryQueue(kind, tier: tier), properties: properties)
            await ack(delivery, logger)
        } catch {
            await requeue(delivery, logger, because: error)
        }
    }

    /// Publishes the message with its reason to the dead-letter exchange, then acks it.
    func deadLetter(_ delivery: AMQPDelivery, reason: String, category: String, attempts: Int) async {
        var properties = delivery.properties
        properties.persistent = true
        properties.headers["x-herald-reason"] = .string(reason)
        properties.headers["x-herald-category"] = .string(category)
        properties.headers["x-herald-queue"] = .string(topology.workQueue(kind))
        properties.headers["x-herald-routing-key"] = .string(Self.originalRoutingKey(delivery))
        properties.headers["x-herald-attempts"] = .int(Int64(attempts))
        properties.headers["x-herald-dead-lettered-at"] = .timestamp(Date())
        do {
            try await deps.connection.publish(body: delivery.body, exchange: topology.deadLetterExchange, routingKey: kind.rawValue, properties: properties)
            metrics.deadLetter(category: category)
            await ack(delivery, logger)
        } catch {
            await requeue(delivery, logger, because: error)
        }
    }

    private static func originalRoutingKey(_ delivery: AMQPDelivery) -> String {
        if case .string(let key)? = delivery.properties.headers["x-herald-routing-key"] { return key }
        return delivery.routingKey
    }

    private func recordDead(_ messageID: String, reason: String, _ logger: Logger) async {
        let finished = JobLedger.Finished(messageID: messageID, status: "dead", reason: reason)
        do {
            try await untilDatabase(logger) { try await self.committer.commit(finished, events: [], write: nil) }
        } catch {
            logger.warning("could not record a dead-lettered job", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    private func ack(_ delivery: AMQPDelivery, _ logger: Logger) async {
        do {
            try await delivery.ack()
        } catch {
            // The connection it came on is gone: the broker redelivers it and the ledger
            // recognises it as done.
            logger.info("ack not delivered; the broker will redeliver", metadata: ["error": "\(error)"])
        }
    }

    private func requeue(_ delivery: AMQPDelivery, _ logger: Logger, because error: any Error) async {
        if !(error is CancellationError) {
            logger.warning("job requeued", metadata: ["error": "\(Self.describe(error))"])
            // Not an availability problem (e.g. the schema is missing): pause, so a
            // misconfigured worker does not spin on the queue.
            try? await Task.sleep(for: .seconds(1))
        }
        metrics.job(Handler.Job.typeName, outcome: "requeued")
        try? await delivery.nack(requeue: true)
    }

    // MARK: - Database availability

    /// Runs `operation`, waiting out database unavailability (never giving up while the
    /// process runs). Cancellation (drain timeout) ends the wait with `CancellationError`.
    func untilDatabase<T: Sendable>(_ logger: Logger, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        var delay = Duration.milliseconds(100)
        var warned = false
        while true {
            do {
                try Task.checkCancellation()
                let result = try await withDeadline(operationTimeout, operation)
                deps.health.databaseUp = true
                if warned { logger.info("database reachable again") }
                return result
            } catch where DatabaseAvailability.isUnavailable(error) && !(error is CancellationError) {
                deps.health.databaseUp = false
                metrics.databaseWait()
                if !warned {
                    logger.warning("database unreachable; holding the job until it returns", metadata: ["error": "\(Self.describe(error))"])
                    warned = true
                }
                try Task.checkCancellation()
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    /// An error for logs and reasons: its type and, for PostgreSQL, the SQLSTATE; never
    /// its full text, which may quote bound values.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] { return "PostgreSQL \(state)" }
            return "PostgreSQL \(error.code)"
        }
        if let error = error as? AMQPError { return "\(error)" }
        return String(reflecting: type(of: error))
    }
}
