/// What a channel makes of one way a delivery ended (``ProviderChain/Delivery/settle(in:accepted:refused:failed:)``):
/// the record to write at once, and then either the job's outcome or a retry.
public struct DeliveryEnd: Sendable {
    /// The job's answer once the record is written.
    public enum Answer: Sendable {
        case outcome(JobOutcome)
        /// Every provider failed: the job is retried later (``JobFailure/transient(_:)``).
        case retry(reason: String)
    }

    /// The channel's record of the delivery (its rows' state, the provider attempts).
    public var record: @Sendable () async throws -> Void
    public var answer: Answer

    /// The delivery decided the job: `outcome` after `record`.
    public static func finished(_ outcome: JobOutcome, record: @escaping @Sendable () async throws -> Void) -> Self {
        Self(record: record, answer: .outcome(outcome))
    }

    /// The delivery failed for now: `record`, then the job is retried with `reason`.
    public static func retry(_ reason: String, record: @escaping @Sendable () async throws -> Void) -> Self {
        Self(record: record, answer: .retry(reason: reason))
    }
}
