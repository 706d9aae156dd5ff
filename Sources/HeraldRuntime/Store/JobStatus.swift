/// A job's state in the ledger (`herald.job_runs.status`).
public enum JobStatus: String, StoredState {
    /// Claimed by a worker that is handling it now.
    case running
    /// Waiting in a delay queue for its next try; any worker may claim it.
    case retrying
    /// Its side effect happened (or, re-entrant, was found done).
    case completed
    /// Refused for good (policy, a provider's permanent refusal): recorded, acked, not retried.
    case rejected
    /// Dead-lettered: invalid, or out of attempts.
    case dead

    /// An outcome is committed: a redelivery is acked without running again.
    public var isFinal: Bool { self == .completed || self == .rejected || self == .dead }
}
