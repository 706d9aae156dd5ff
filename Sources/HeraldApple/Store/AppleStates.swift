import HeraldRuntime

/// `herald.apple_jobs.operation`: the job type a record belongs to.
public enum AppleOperation: String, StoredState {
    case token, revoke
}

/// `herald.apple_jobs.state`: what happened to one `apple.token` or `apple.revoke` job.
public enum AppleJobState: String, StoredState {
    /// A call to Apple is in flight now (the row's owner is the calling worker).
    case calling
    /// Apple failed or did not answer; the job waits in a delay queue.
    case retrying
    /// `apple.token`: the refresh token is stored (encrypted).
    case stored
    /// `apple.revoke`: Apple revoked the token, and the stored one is deleted.
    case revoked
    /// `apple.revoke`: nothing was stored and the job gave no code.
    case nothing
    /// Apple refused for good (invalid_grant, …), a check of its answer failed, or the job ran
    /// out of attempts.
    case failed
    /// An earlier try sent the code and stopped before recording the answer: not sent again.
    case uncertain
}

/// `herald.apple_jobs.step`: what the call in flight does.
public enum AppleJobStep: String, StoredState {
    /// Exchanges a single-use authorization code: never sent twice.
    case exchange
    /// Revokes a token: Apple revokes an already revoked token again without harm.
    case revoke
}
