import HeraldRuntime

/// `herald.email_requests.state`: what happened to one email action request.
public enum EmailRequestState: String, StoredState {
    /// Enqueued by Herald itself (the recover_email notice of a used change link), not tried yet.
    case queued
    /// A send is at a provider now (the row's owner is the sending worker).
    case sending
    /// Every provider failed; the job waits in a delay queue.
    case retrying
    /// Delivered to a provider.
    case sent
    /// Nothing sent: no account has this address (enumeration protection, silent).
    case noAccount = "no_account"
    /// The no-account note was sent instead of a link.
    case noted
    /// A provider refused it for good, or its job was dead-lettered after `runner.max_attempts`.
    case failed
}

/// `herald.email_codes.status`: whether a link code can still be used.
public enum EmailCodeStatus: String, StoredState {
    case pending, used, expired
    /// Replaced: a later try of the same request minted a new code, another link of the same
    /// (address, mode) was used, or a newer reset_password request was made for the address.
    case superseded
    /// Its send failed for good (refused, or the job exhausted its tries).
    case failed
}
