import HeraldRuntime

/// `herald.email_otp_verifications.state`: what happened to one `email.code` job's verification.
public enum EmailCodeVerificationState: String, StoredState {
    /// A send is at a provider now (the row's owner is the sending worker).
    case sending
    /// Every provider failed; the job waits in a delay queue.
    case retrying
    /// A provider accepted the email.
    case sent
    /// Answered by the code mailed moments ago to the same address and purpose: no email.
    case reused
    /// Refused before any send (`locked_out`, `rate_limited:<scope>`).
    case refused
    /// A provider refused it for good, or its job ran out of tries.
    case failed
}

/// `herald.email_otp_codes.status`: whether a one-time email code can still be checked.
public enum EmailOneTimeCodeStatus: String, StoredState {
    case pending, verified, expired
    /// `email.code.max_attempts` wrong tries.
    case dead
    /// Its send failed for good.
    case failed
}
