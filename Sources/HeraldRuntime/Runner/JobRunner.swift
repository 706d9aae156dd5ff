import AMQP
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Tracing

/// The pipeline every worker shares: decode → validate → claim → handle → commit → ack.
///
/// - invalid input is dead-lettered at once with its reason (``DeadLetterStamp``), from the
///   connection thread by the consumer's screen, without a task or a hand-off (acked on the confirm);
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
    let logger: Logger
    let metrics: RunnerMetrics
    let observer: RunnerObserver
    let settlement: DeliverySettlement
    let hold: DatabaseHold
    let decoder: JobDecoder<Handler.Job>
    let ledger: JobLedger
    let committer: OutcomeCommitter
    let claims: GroupBatcher<JobLedger.ClaimRequest, JobLedger.Claim>
    private let inFlight = Mutex(0)
    /// Signalled when the last in-flight job finishes.
    private let idle = WakeSignal()

    public init(kind: JobKind, handler: Handler, dependencies: Dependencies, topology: HeraldTopology, configuration: RunnerConfiguration, prefetch: Int, operationTimeout: Duration = .seconds(15), logger: Logger) {
        self.kind = kind
        self.handler = handler
        self.deps = dependencies
        self.topology = topology
        self.configuration = configuration
        self.prefetch = prefetch
        self.logger = logger
        let metrics = RunnerMetrics(queue: kind.rawValue)
        self.metrics = metrics
        self.observer = RunnerObserver(metrics: metrics, logger: logger)
        self.settlement = DeliverySettlement(kind: kind, connection: dependencies.connection, topology: topology, observer: observer)
        let health = dependencies.health
        self.hold = DatabaseHold(operationTimeout: operationTimeout) { up in
            health.databaseUp = up
            if !up { metrics.databaseWait() }
        }
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
        // Decoded where the connection reads it: a body that can never be a job (one over the
        // limit was drained unbuffered) is dead-lettered there, and only jobs come through.
        let consumer = deps.connection.consume(queue: topology.workQueue(kind), prefetch: UInt16(clamping: prefetch),
                                               maxBodyBytes: configuration.maxMessageBytes) { self.screen($0) }
        logger.info("consuming", metadata: ["queue": "\(topology.workQueue(kind))", "prefetch": "\(prefetch)"])
        await withGracefulShutdownHandler {
            // Discarding: a finished job leaves nothing behind in the group.
            await withDiscardingTaskGroup { group in
                for await received in consumer {
                    inFlight.withLock { $0 += 1 }
                    group.addTask {
                        await self.processTraced(received)
                        self.finishedOne()
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
    /// A runner cancelled while it drains (the service group's shutdown bound has passed) stops
    /// waiting at once: ``WakeSignal/wait(timeout:)`` returns immediately once cancelled, so
    /// waiting on would spin until the deadline and hold the shutdown past its bound.
    private func drained() async -> Bool {
        let left = inFlight.withLock { $0 }
        guard left > 0 else { return true }
        logger.info("draining in-flight jobs", metadata: ["count": "\(left)", "timeout_s": "\(configuration.drainTimeoutSeconds)"])
        let deadline = ContinuousClock.now + .seconds(configuration.drainTimeoutSeconds)
        while inFlight.withLock({ $0 }) > 0 {
            let remaining = deadline - .now
            guard remaining > .zero, !Task.isCancelled else {
                logger.warning(Task.isCancelled ? "drain cancelled; requeueing unfinished jobs" : "drain timeout; requeueing unfinished jobs",
                               metadata: ["count": "\(inFlight.withLock { $0 })"])
                return false
            }
            await idle.wait(timeout: remaining)
        }
        return true
    }

    private func finishedOne() {
        if inFlight.withLock({ $0 -= 1; return $0 }) == 0 { idle.signal() }
    }

    // MARK: - One delivery

    /// A delivery decoded into a job on the connection thread, and when it was read (and, when
    /// tracing is on, when its decoding started and ended: the `decode` span).
    struct Received: Sendable {
        let delivery: AMQPDelivery
        let decoded: (JobEnvelope, Handler.Job)
        let at: ContinuousClock.Instant
        var decoding: ClosedRange<DefaultTracerClock.Instant>? = nil
    }

    /// The consumer's screen, on the connection thread: a job goes on to the consumer's loop;
    /// a body that failed to decode is dead-lettered from there with its reason, without a
    /// task or a thread hand-off (a flood of them costs the least it can), and ends when the
    /// broker's confirm, heard on the same thread, has acked it.
    private func screen(_ delivery: AMQPDelivery) -> AMQPScreening<Received> {
        let at = ContinuousClock.now
        let traceStart = HeraldTracing.tracer == nil ? nil : DefaultTracerClock.now
        switch decoder.decode(delivery) {
        case .success(let decoded):
            return .deliver(Received(delivery: delivery, decoded: decoded, at: at, decoding: traceStart.map { $0...DefaultTracerClock.now }))
        case .failure(let error):
            inFlight.withLock { $0 += 1 }
            let type = Handler.Job.typeName
            let gauge = metrics.inFlight
            gauge.increment()
            observer.invalidBody(type: type, reason: error.reason, messageID: delivery.properties.messageID)
            return .move(settlement.deadLetterMove(delivery, type: type, reason: error.reason, category: "invalid", attempts: 0, logger) {
                gauge.decrement()
                self.finishedOne()
            })
        }
    }

    /// claim → handle → commit → ack, for a delivery received (and decoded) at `started`.
    func process(_ delivery: AMQPDelivery, _ decoded: (JobEnvelope, Handler.Job), started: ContinuousClock.Instant) async {
        let gauge = metrics.inFlight
        gauge.increment()
        defer { gauge.decrement() }
        let type = Handler.Job.typeName
        let (envelope, job) = decoded
        let logger = observer.logger(for: envelope)

        // Claim: the ledger says whether this message runs here, ran already, or runs elsewhere.
        let claim: JobLedger.Claim
        do {
            let request = JobLedger.ClaimRequest(messageID: envelope.messageID, jobType: envelope.typeName, token: RandomID.uuid())
            claim = try await HeraldTracing.withSpan("claim") { _ in try await hold.run(logger) { try await self.claims.submit(request) } }
        } catch {
            await settlement.requeue(delivery, type: type, because: error, logger)
            return
        }
        switch claim {
        case .finished(let status):
            observer.duplicate(type: envelope.typeName, status: status, logger)
            await settlement.ack(delivery, logger)
        case .busy:
            // A live worker runs the same message_id now: look again after the first delay.
            observer.deferred(type: envelope.typeName)
            await settlement.delay(delivery, type: type, tier: 0, attempt: 0, reason: "in progress elsewhere", logger)
        case .claimed(let attempt, let tookOver):
            if tookOver { observer.tookOver(attempt: attempt, logger) }
            guard attempt <= configuration.maxAttempts else {
                // A job that kills its worker every time must not loop forever.
                await giveUp(job, delivery, envelope, attempt: attempt, attempts: attempt - 1,
                             reason: "gave up after \(attempt - 1) attempts without an outcome (the worker stopped each time)", logger)
                return
            }
            await run(job, delivery: delivery, envelope: envelope, attempt: attempt, started: started, logger: logger)
        }
    }

    /// Handle → commit → ack, or the failure's way out (dead letter, delay, requeue).
    private func run(_ job: Handler.Job, delivery: AMQPDelivery, envelope: JobEnvelope, attempt: Int, started: ContinuousClock.Instant, logger: Logger) async {
        let type = envelope.typeName
        let context = self.context(delivery, envelope, attempt: attempt, logger)
        do {
            let outcome = try await HeraldTracing.withSpan("handle \(type)") { _ in try await handle(job, context: context) }
            let finished = JobLedger.Finished(messageID: envelope.messageID, status: outcome.ledgerStatus, reason: outcome.reason)
            do {
                try await HeraldTracing.withSpan("commit") { _ in
                    try await hold.run(logger) { try await self.committer.commit(finished, events: outcome.events, write: outcome.write) }
                }
            } catch is CancellationError {
                await settlement.requeue(delivery, type: type, because: CancellationError(), logger)
                return
            } catch {
                throw JobFailure.transient("the outcome could not be recorded (\(RunnerObserver.describe(error)))")
            }
            if !outcome.events.isEmpty { deps.relay?.poke() }
            if let decision = outcome.decision ?? outcome.reason.map({ JobDecision.refused($0) }) { context.decided(decision) }
            await settlement.ack(delivery, logger)
            observer.finished(type: type, status: outcome.ledgerStatus, since: started)
        } catch JobFailure.invalid(let reason) {
            observer.refusedInvalid(type: type, reason: reason, logger)
            await settlement.deadLetter(delivery, type: type, reason: reason, category: "invalid", attempts: attempt, logger)
            await recordDead(envelope.messageID, reason: reason, logger)
            context.decided(JobDecision(status: .invalid, reason: reason))
        } catch JobFailure.transient(let reason) {
            await retryOrGiveUp(job, delivery, envelope, attempt: attempt, reason: reason, logger)
        } catch where Task.isCancelled {
            await settlement.requeue(delivery, type: type, because: error, logger)
        } catch {
            await retryOrGiveUp(job, delivery, envelope, attempt: attempt, reason: "unexpected error (\(RunnerObserver.describe(error)))", logger)
        }
    }

    private func context(_ delivery: AMQPDelivery, _ envelope: JobEnvelope, attempt: Int, _ logger: Logger) -> JobContext {
        JobContext(envelope: envelope, attempt: attempt, mayBeRepeat: attempt > 1 || delivery.redelivered,
                   logger: logger, database: deps.database, ownerKey: deps.ownerKey, hold: hold,
                   answer: envelope.replyTo == nil ? nil : DecisionAnswer(connection: deps.connection, envelope: envelope, repliesPrefix: topology.repliesPrefix))
    }

    /// Runs the handler; when it loses the database (a handler's own reads and writes), the
    /// job is held until the database answers again and the handler runs again, so an
    /// outage never turns into a retry that counts or a dead letter. A handler's database
    /// steps are idempotent for this reason. Three holds in a row that find the database
    /// reachable at once mean the error is the handler's own: it is thrown. A run longer than
    /// `runner.handler_timeout_seconds` counts as a lost database (unless `Handler.runsLong`).
    private func handle(_ job: Handler.Job, context: JobContext) async throws -> JobOutcome {
        var spurious = 0
        let handler = self.handler
        let limit = Handler.runsLong || configuration.handlerTimeoutSeconds == 0 ? nil : Duration.seconds(configuration.handlerTimeoutSeconds)
        while true {
            do {
                // A handler's database call that never answers (seen after a PostgreSQL
                // restart) would hold its job, and its prefetch slot, for ever: past the limit
                // the run is abandoned and, like a lost database, run again.
                guard let limit else { return try await handler.handle(job, context: context) }
                return try await withDeadline(limit) { try await handler.handle(job, context: context) }
            } catch where DatabaseAvailability.isUnavailable(error) && !Task.isCancelled && spurious < 3 {
                observer.handlerLostDatabase(error, context.logger)
                let started = ContinuousClock.now
                let (database, logger) = (deps.database, context.logger)
                _ = try await hold.run(logger) { try await Ping().rows(on: database, logger: logger); return true }
                spurious = ContinuousClock.now - started < .milliseconds(50) ? spurious + 1 : 0
            }
        }
    }

    private func retryOrGiveUp(_ job: Handler.Job, _ delivery: AMQPDelivery, _ envelope: JobEnvelope, attempt: Int, reason: String, _ logger: Logger) async {
        let type = envelope.typeName
        guard attempt < configuration.maxAttempts else {
            await giveUp(job, delivery, envelope, attempt: attempt, attempts: attempt, reason: "gave up after \(attempt) attempts: \(reason)", logger)
            return
        }
        do {
            try await hold.run(logger) { try await self.ledger.markRetrying(messageID: envelope.messageID, reason: reason) }
        } catch {
            await settlement.requeue(delivery, type: type, because: error, logger)
            return
        }
        let tier = topology.retryTier(afterAttempt: attempt)
        observer.retried(type: type, attempt: attempt, tier: tier, reason: reason, logger)
        await settlement.delay(delivery, type: type, tier: tier, attempt: attempt, reason: reason, logger)
    }

    /// Out of attempts: dead-lettered and recorded `dead`, with the handler's last word
    /// (``JobHandler/exhausted(_:reason:context:)``: its channel rows end `failed`) in the
    /// same transaction. `attempt` is this claim's number, `attempts` the tries that ran.
    private func giveUp(_ job: Handler.Job, _ delivery: AMQPDelivery, _ envelope: JobEnvelope, attempt: Int, attempts: Int, reason: String, _ logger: Logger) async {
        observer.exhausted(type: envelope.typeName, reason: reason, logger)
        await settlement.deadLetter(delivery, type: envelope.typeName, reason: reason, category: "exhausted", attempts: attempts, logger)
        let outcome = handler.exhausted(job, reason: reason, context: context(delivery, envelope, attempt: attempt, logger))
        guard outcome.write != nil || !outcome.events.isEmpty else {
            await recordDead(envelope.messageID, reason: reason, logger)
            return
        }
        let finished = JobLedger.Finished(messageID: envelope.messageID, status: .dead, reason: reason)
        do {
            try await hold.run(logger) { try await self.committer.commit(finished, events: outcome.events, write: outcome.write) }
            if !outcome.events.isEmpty { deps.relay?.poke() }
        } catch {
            // The handler's write failed on its own: the ledger still says `dead`.
            observer.notRecorded("could not record an exhausted job's final state", error, logger)
            await recordDead(envelope.messageID, reason: reason, logger)
        }
    }

    private func recordDead(_ messageID: String, reason: String, _ logger: Logger) async {
        let finished = JobLedger.Finished(messageID: messageID, status: .dead, reason: reason)
        do {
            try await hold.run(logger) { try await self.committer.commit(finished, events: [], write: nil) }
        } catch {
            observer.notRecorded("could not record a dead-lettered job", error, logger)
        }
    }
}
