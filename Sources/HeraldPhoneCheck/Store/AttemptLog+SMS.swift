import HeraldRuntime

extension AttemptLog {
    /// `herald.sms_send_attempts`: every provider call of a phone verification, on any of its
    /// channels (`heraldctl verify show-sms` and herald-api print them).
    public static let sms = AttemptLog { SMSAttemptsRead(key: $0) }
}

extension SMSAttemptsRead.Row: DeliveryAttemptRow {}
