import HeraldRuntime

/// `herald.email_requests.state`: what happened to one email action request.
public enum EmailRequestState: String, StoredState {
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
    /// A provider refused it for good.
    case failed
}

/// `herald.email_codes.status`: whether a link code can still be used.
public enum EmailCodeStatus: String, StoredState {
    case pending, used, expired
    /// A later try of the same request minted a new code.
    case superseded
    /// Its send failed for good.
    case failed
}
