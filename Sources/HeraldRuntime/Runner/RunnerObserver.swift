import AMQP
import Foundation
import Logging

/// What the runner tells the world about each delivery: its metrics and its log lines, kept
/// out of the runner's control flow (as swift-jobs does with its middleware). One method per
/// event of a job's path; each counts `herald_jobs_total{outcome}` where the job ends.
struct RunnerObserver: Sendable {
    let metrics: RunnerMetrics
    let logger: Logger
    /// Invalid jobs' warnings: 20 per 10 s, then a count (``LogSampler``). Each is counted in
    /// `herald_jobs_total{outcome="invalid"}` and dead-lettered with its reason all the same.
    let invalidLines = LogSampler()

    /// The job's logger: `message_id` and `correlation_id` as metadata.
    func logger(for envelope: JobEnvelope) -> Logger {
        var logger = self.logger
        logger[metadataKey: "message_id"] = "\(envelope.messageID)"
        if let correlation = envelope.correlationID { logger[metadataKey: "correlation_id"] = "\(JobEnvelope.printable(correlation))" }
        return logger
    }

    func invalidBody(type: String, reason: String, messageID: String?) {
        if let omitted = invalidLines.admit() {
            logger.warning("invalid job dead-lettered", metadata: Self.omitting(omitted, [
                "reason": "\(reason)", "message_id": "\(JobEnvelope.printable(messageID ?? "-"))"]))
        }
        metrics.job(type, outcome: "invalid")
    }

    /// `omitted`: invalid jobs whose lines were left out since the last one logged.
    private static func omitting(_ omitted: Int, _ metadata: Logger.Metadata) -> Logger.Metadata {
        guard omitted > 0 else { return metadata }
        var metadata = metadata
        metadata["omitted"] = "\(omitted)"
        return metadata
    }

    func duplicate(type: String, status: JobStatus, _ logger: Logger) {
        logger.debug("duplicate delivery acked", metadata: ["status": "\(status.rawValue)"])
        metrics.job(type, outcome: "duplicate")
    }

    func deferred(type: String) {
        metrics.job(type, outcome: "deferred")
    }

    func tookOver(attempt: Int, _ logger: Logger) {
        // Its worker died mid-job: the side effect may have happened (counted, bounded).
        metrics.takeover()
        logger.warning("took over a job whose worker died", metadata: ["attempt": "\(attempt)"])
    }

    func finished(type: String, status: JobStatus, since started: ContinuousClock.Instant) {
        metrics.job(type, outcome: status.rawValue)
        metrics.duration(type, ContinuousClock.now - started)
    }

    func refusedInvalid(type: String, reason: String, _ logger: Logger) {
        if let omitted = invalidLines.admit() {
            logger.warning("job refused as invalid; dead-lettered", metadata: Self.omitting(omitted, ["reason": "\(reason)"]))
        }
        metrics.job(type, outcome: "invalid")
    }

    func exhausted(type: String, reason: String, _ logger: Logger) {
        logger.warning("job dead-lettered", metadata: ["reason": "\(reason)"])
        metrics.job(type, outcome: "dead_lettered")
    }

    func retried(type: String, attempt: Int, tier: Int, reason: String, _ logger: Logger) {
        logger.info("job will be retried", metadata: ["attempt": "\(attempt)", "tier": "\(tier + 1)", "reason": "\(reason)"])
        metrics.retry(tier: tier + 1)
        metrics.job(type, outcome: "retried")
    }

    func requeued(type: String, because error: any Error, _ logger: Logger) {
        if !(error is CancellationError) {
            logger.warning("job requeued", metadata: ["error": "\(RunnerObserver.describe(error))"])
        }
        metrics.job(type, outcome: "requeued")
    }

    func deadLettered(category: String) {
        metrics.deadLetter(category: category)
    }

    func handlerLostDatabase(_ error: any Error, _ logger: Logger) {
        let what = error is DeadlineExceeded
            ? "the handler did not answer within runner.handler_timeout_seconds; running it again"
            : "the handler lost the database; holding the job until it returns"
        logger.warning("\(what)", metadata: ["error": "\(RunnerObserver.describe(error))"])
    }

    func notRecorded(_ what: String, _ error: any Error, _ logger: Logger) {
        logger.warning("\(what)", metadata: ["error": "\(RunnerObserver.describe(error))"])
    }

    func ackLost(_ error: any Error, _ logger: Logger) {
        // The connection it came on is gone: the broker redelivers it and the ledger
        // recognises it as done.
        logger.info("ack not delivered; the broker will redeliver", metadata: ["error": "\(error)"])
    }

    /// An error for logs and reasons: never its full text, which may quote bound values.
    static func describe(_ error: any Error) -> String {
        if let error = error as? AMQPError { return "\(error)" }
        return DatabaseAvailability.describe(error)
    }
}
