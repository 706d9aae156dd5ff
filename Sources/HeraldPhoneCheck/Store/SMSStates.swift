import HeraldRuntime

/// `herald.sms_verifications.state`: what happened to one verification request.
public enum SMSVerificationState: String, StoredState {
    /// A code is at a provider now (the row's owner is the sending worker).
    case sending
    /// Every provider failed; the job waits in a delay queue.
    case retrying
    case sent
    /// A code sent moments ago answers this verification too; no SMS.
    case reused
    /// A test number: its fixed code stored, no SMS.
    case test
    /// Refused by policy (region, rate limit); no SMS.
    case refused
    /// Refused for good by a provider.
    case failed
}

/// `herald.sms_codes.status`: whether a code can still be checked.
public enum SMSCodeStatus: String, StoredState {
    case pending, verified
    /// Too many wrong attempts.
    case dead
    case expired
    /// Its send failed for good.
    case failed
}
