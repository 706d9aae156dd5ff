import Foundation
import HeraldRuntime
import Logging

/// A handler for tests and benchmarks of the runner itself: it "delivers" a job by recording
/// it in `herald.dev_outbox`, atomically with the job's outcome, and emits `<kind>.sent`.
/// `outbox.delay_ms` simulates a provider's latency. Shipped workers run their channel's
/// real handler, whose dev outbox is a provider of the chain.
public struct DevOutboxHandler<Job: HeraldJob>: JobHandler {
    public let delay: Duration
    /// The recipient as the outbox shows it (masked).
    let recipient: @Sendable (Job) -> String

    public init(configuration: OutboxConfiguration, recipient: @escaping @Sendable (Job) -> String = { _ in "-" }) {
        self.delay = .milliseconds(configuration.delayMilliseconds)
        self.recipient = recipient
    }

    public func handle(_ job: Job, context: JobContext) async throws -> JobOutcome {
        if delay > .zero { try await Task.sleep(for: delay) }
        let entry = DevOutbox.Entry(
            kind: Job.kind.rawValue,
            messageID: context.envelope.messageID,
            jobType: Job.typeName,
            recipient: recipient(job),
            body: String(decoding: try JSONEncoder().encode(job), as: UTF8.self)
        )
        let event = OutgoingEvent(name: "\(Job.kind.rawValue).sent", payload: OutboxSent(messageID: entry.messageID, jobType: entry.jobType))
        context.logger.info("delivered to the dev outbox", metadata: ["recipient": "\(entry.recipient)"])
        return .completed(events: [event]) { connection, logger in
            try await DevOutbox.record(entry, on: connection, logger: logger)
        }
    }
}

/// Payload of the `<kind>.sent` event the dev outbox emits.
struct OutboxSent: Encodable {
    var messageID: String
    var jobType: String
    var provider = "outbox"
    enum CodingKeys: String, CodingKey { case messageID = "message_id", jobType = "job_type", provider }
}
