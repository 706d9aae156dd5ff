import AMQP
import HeraldRuntime
import Logging
import PostgresNIO

/// A start through the door (docs/api.md, "Starts answer with the decision"): the job is
/// written to the transactional outbox in the transaction that records the start, published
/// after the commit by the jobs relay, and the request waits for the worker's decision on its
/// replies queue, at most `api.decision_wait_ms`.
///
/// Nothing is published that the answer does not stand behind: a start answered 503 recorded
/// nothing (the broker was not taking publishes, or the database did not commit), and one
/// answered 2xx is in the outbox, published at least once and handled once (its message id).
struct JobStarts: Sendable {
    let database: PostgresClient
    let connection: AMQPConnection
    let replies: DecisionReplies
    let relay: EventRelay
    let jobsExchange: String
    let wait: Duration
    let metrics: APIMetrics

    /// What the request is answered.
    enum Answer: Sendable, Equatable {
        /// The worker decided within the wait.
        case decided(JobDecision)
        /// Recorded, not decided within the wait: read the outcome later.
        case queued
    }

    /// Refuses a start at once (503) while the broker is away or has blocked publishing: a job
    /// recorded now would wait in the outbox for it.
    func requireBroker() throws {
        guard connection.acceptsPublishes else {
            metrics.enqueueFailed(connection.isConnected ? "blocked" : "disconnected")
            throw APIFailure.brokerUnavailable(retryAfterSeconds: 2)
        }
    }

    /// Records `job` in the outbox (a transaction of its own) and waits for its decision.
    func start<Job: HeraldJob>(_ job: Job, messageID: String, correlationID: String?, logger: Logger) async throws -> Answer {
        let (_, waiter) = try await recording(messageID: messageID) {
            try await database.withConnection { connection in
                try await record(job, messageID: messageID, correlationID: correlationID, on: connection, logger: logger)
            }
        }
        return await decision(waiter)
    }

    /// The steps of every start before its commit: the broker must take publishes (else 503 at
    /// once, nothing recorded), the decision of `messageID` is awaited from before its job can be
    /// published, and `transaction` records the start and its job (``record(_:messageID:correlationID:on:logger:)``).
    /// Returns what `transaction` returned and the waiter for ``decision(_:)``; a failed
    /// transaction stops the wait.
    func recording<T>(messageID: String, _ transaction: () async throws -> T) async throws -> (T, DecisionReplies.Waiter) {
        try requireBroker()
        let waiter = replies.expect(messageID)
        do {
            return (try await transaction(), waiter)
        } catch {
            waiter.cancel()
            throw error
        }
    }

    /// Writes `job` to the outbox on `connection` (in the caller's transaction, when it has one).
    func record<Job: HeraldJob>(_ job: Job, messageID: String, correlationID: String?, on connection: PostgresConnection, logger: Logger) async throws {
        do {
            try await PublishSpan.run(tracer: HeraldTracing.tracer, exchange: jobsExchange, routingKey: Job.name, messageID: messageID,
                                      correlationID: correlationID, jobType: Job.typeName) { headers in
                try await JobOutbox.insert(job, messageID: messageID, correlationID: correlationID, replyTo: replies.queue,
                                           exchange: jobsExchange, traceHeaders: headers, on: connection, logger: logger)
            }
        } catch let error as JobValidationError {
            throw APIFailure.invalid(field: nil, reason: error.reason)
        }
    }

    /// After the commit: the relay publishes now, and the request waits for the decision.
    func decision(_ waiter: DecisionReplies.Waiter) async -> Answer {
        relay.poke()
        guard wait > .zero, let decision = await waiter.decision(within: wait) else {
            waiter.cancel()
            metrics.startAnswered("queued")
            return .queued
        }
        metrics.startAnswered(decision.status.rawValue)
        return .decided(decision)
    }
}
