import AMQP
import Logging
import Synchronization

/// Answers a job's `reply_to` with the worker's decision (``JobDecision``), at most once per
/// run: the handler when it has decided to send (its decision committed, before the provider
/// call), else the runner once the outcome is committed. A job nobody waits for (no
/// `reply_to`, or one outside this namespace's replies queues) answers nothing.
///
/// Fire and forget: the reply is not persistent and not awaited by the job. A reply lost (the
/// waiting herald-api gone, a broker restart) leaves the request to its documented answer
/// when its wait runs out (202, read the state later).
public final class DecisionAnswer: Sendable {
    private let connection: AMQPConnection?
    private let replyTo: String?
    private let messageID: String
    private let answered = Mutex(false)

    /// `repliesPrefix`: ``HeraldTopology/repliesPrefix``; a `reply_to` outside it is not answered.
    public init(connection: AMQPConnection?, envelope: JobEnvelope, repliesPrefix: String) {
        self.connection = connection
        self.replyTo = envelope.replyTo.flatMap { $0.hasPrefix(repliesPrefix) ? $0 : nil }
        self.messageID = envelope.messageID
    }

    /// Answers `decision` unless this run has answered already.
    public func answer(_ decision: JobDecision, logger: Logger) {
        guard let connection, let replyTo else { return }
        guard answered.withLock({ done in defer { done = true }; return !done }) else { return }
        var properties = AMQPProperties()
        properties.contentType = "application/json"
        properties.correlationID = messageID
        properties.type = JobDecision.typeName
        properties.appID = "herald"
        let body = decision.encoded()
        Task {
            do {
                try await connection.publish(body: body, exchange: "", routingKey: replyTo, properties: properties)
            } catch {
                logger.notice("the decision could not be answered; the request reads it later", metadata: ["error": "\(error)"])
            }
        }
    }
}
