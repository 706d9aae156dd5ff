import Foundation
import Logging

/// The dev provider of every worker kind until its real handler exists: it "delivers" a
/// job by recording it in `herald.dev_outbox`, atomically with the job's outcome, and
/// emits `<kind>.sent`. `outbox.delay_ms` simulates a provider's latency.
public struct DevOutboxHandler<Job: HeraldJob>: JobHandler {
    public let delay: Duration

    public init(configuration: OutboxConfiguration) {
        self.delay = .milliseconds(configuration.delayMilliseconds)
    }

    public func handle(_ job: Job, context: JobContext) async throws -> JobOutcome {
        if delay > .zero { try await Task.sleep(for: delay) }
        let entry = DevOutbox.Entry(
            kind: Job.kind.rawValue,
            messageID: context.envelope.messageID,
            jobType: Job.typeName,
            recipient: Self.recipient(of: job),
            body: String(decoding: try JSONEncoder().encode(job), as: UTF8.self)
        )
        let event = OutgoingEvent(name: "\(Job.kind.rawValue).sent", payload: OutboxSent(messageID: entry.messageID, jobType: entry.jobType))
        context.logger.info("delivered to the dev outbox", metadata: ["recipient": "\(entry.recipient)"])
        return .completed(events: [event]) { connection, logger in
            try await DevOutbox.record(entry, on: connection, logger: logger)
        }
    }

    static func recipient(of job: Job) -> String {
        switch job {
        case let job as SMSVerificationJob: Redact.phone(job.phoneNumber)
        case let job as EmailActionJob: Redact.email(job.email)
        case let job as PushVerificationJob: "\(job.platform.rawValue):\(job.deviceToken.prefix(8))…"
        case let job as CleanupRunJob: "run:\(job.runID)"
        default: "-"
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
