import AMQP
import Foundation
import Logging
import PostgresNIO

/// A job written to the transactional outbox (`herald.event_outbox`, the jobs exchange) in the
/// caller's transaction: it is published after the commit by an ``EventRelay`` of the jobs
/// exchange, and never if the transaction rolls back. What herald-api's starts use instead of
/// publishing inside a transaction.
public enum JobOutbox {
    /// Validates and encodes `job` (as ``HeraldJob/encodedBody()``) and inserts it with its
    /// message id, the request's correlation id and the queue that waits for its decision.
    /// `traceHeaders`: the publish span's W3C context (``PublishSpan``), published with the job.
    public static func insert<Job: HeraldJob>(_ job: Job, messageID: String, correlationID: String?, replyTo: String?, exchange: String,
                                              traceHeaders: AMQPTable = [:], on connection: PostgresConnection, logger: Logger) async throws {
        let body = String(decoding: try job.encodedBody(messageID: messageID), as: UTF8.self)
        var binds = PostgresBindings(capacity: 8)
        binds.append(exchange)
        binds.append(Job.name)
        binds.append(messageID)
        binds.append(body)
        binds.append(correlationID)
        binds.append(replyTo)
        for key in AMQPTraceCarrier.keys {
            if case .string(let value)? = traceHeaders[key] { binds.append(value) } else { binds.appendNull() }
        }
        try await Prepared<InsertSQL>(bindings: binds).rows(on: connection, logger: logger)
    }

    /// $1 exchange, $2 job name (its routing key), $3 message id, $4 body, $5 correlation id, $6 reply queue,
    /// $7 traceparent, $8 tracestate.
    enum InsertSQL: StatementText {
        static let sql = """
            INSERT INTO herald.event_outbox (exchange, name, message_id, body, correlation_id, reply_to, traceparent, tracestate)
            VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text)
            """
    }
}

extension HeraldJob {
    /// The job's JSON body as a publisher sends it, after the checks a worker makes of it
    /// (the message id's rule and the job's own).
    public func encodedBody(messageID: String) throws(JobValidationError) -> [UInt8] {
        try JobEnvelope.checkMessageID(messageID)
        try validate()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(self))
        } catch {
            throw JobValidationError("the job could not be encoded")
        }
    }
}
