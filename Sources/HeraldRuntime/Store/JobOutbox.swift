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
        func trace(_ key: String) -> String? {
            if case .string(let value)? = traceHeaders[key] { return value }
            return nil
        }
        try await JobOutboxInsert(exchange: exchange, name: Job.name, messageID: messageID, body: body, correlationID: correlationID,
                                  replyTo: replyTo, traceparent: trace(AMQPTraceCarrier.traceparent), tracestate: trace(AMQPTraceCarrier.tracestate)).rows(on: connection, logger: logger)
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
