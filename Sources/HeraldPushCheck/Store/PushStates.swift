import HeraldRuntime

/// `herald.push_verifications.state`: what happened to one receipt's push.
public enum PushVerificationState: String, StoredState {
    /// A push is at the provider now (the row's owner is the sending worker).
    case sending
    /// The provider failed; the job waits in a delay queue (the secret is void).
    case retrying
    case sent
    /// The provider refused it for good, or the token is dead.
    case failed
    /// Refused by policy (a dead token, the per-device limit); nothing pushed.
    case refused
}

/// `herald.push_verifications.secret_status`: whether the pushed secret can still be confirmed.
public enum PushSecretStatus: String, StoredState {
    case pending, verified, expired
    /// Its push failed or was retried with a fresh secret.
    case void
}
