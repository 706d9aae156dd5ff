import HeraldRuntime

extension CleanupConfiguration {
    /// `cleanup.purge.*_days`: how long each purged table's rows are kept (``PurgeTarget``);
    /// 0 keeps them.
    public struct Purge: Sendable {
        /// The idempotency ledger (`herald.job_runs`), by the day a job was first claimed: each
        /// day is dropped whole once this many days have passed since it ended; its unfinished
        /// jobs move on to the current day. A message delivered again after that runs again.
        public var jobRunsDays: Int = 7
        /// What the dev outbox provider "delivered" (`herald.dev_outbox`).
        public var devOutboxDays: Int = 7
        /// Event outbox rows no relay published that long (the relay deletes what it publishes,
        /// so only rows of an exchange nobody relays are left). Off by default: they are events.
        public var eventOutboxDays: Int = 0
        /// Finished cleanup runs (`herald.cleanup_runs`).
        public var cleanupRunsDays: Int = 90
        /// SMS verifications, their provider attempts, and codes past their expiry.
        public var smsDays: Int = 30
        /// SMS rate-limit windows past their end.
        public var smsRateCountersDays: Int = 1
        /// The app evidence accepted for a verification (`herald.sms_app_verifications`): it
        /// only matters while the verification's job may be redelivered.
        public var smsAppVerificationsDays: Int = 2
        /// Fallbacks between channels (`herald.sms_fallbacks`, by `created_at`): a sealed code no
        /// channel will send any more (a code lives at most a day).
        public var smsFallbacksDays: Int = 2
        /// The fraud guard's minute buckets (`herald.sms_fraud_counts` and
        /// `herald.sms_fraud_let_through`, by `minute`) and the
        /// scopes it marked on each verification (`herald.sms_fraud_marks`, by `created_at`). A
        /// window is at most a day and a code lives at most a day: so 0 or at least 2.
        public var smsFraudDays: Int = 2
        /// Numbers that verified a code (`herald.sms_known_numbers`, HMACs), by their last
        /// verification: the fraud guard never refuses them.
        public var smsKnownNumbersDays: Int = 365
        /// Push verifications (by expiry) and device tokens not seen for this long.
        public var pushDays: Int = 30
        /// Email requests and link codes (`herald.email_requests`, `herald.email_codes`: codes past their expiry).
        public var emailDays: Int = 30
        /// Every call to Apple of a job (`herald.apple_attempts`), by day.
        public var appleAttemptsDays: Int = 30
        /// Apple's server-to-server notifications acted on (`herald.apple_notifications`, by
        /// `received_at`). Their `jti` refuses a replay, and a notification is accepted up to
        /// `apple.notifications.max_age_seconds` (at most 30 days) after it was issued: so 0
        /// or more than 30 days.
        public var appleNotificationsDays: Int = 60
        /// Markings of Apple's private relay addresses (`herald.apple_relay_addresses`) not
        /// changed (`updated_at`) for this long. A purged "forwarding off" marking lets mail
        /// to the address go out again (Apple drops it).
        public var appleRelayAddressesDays: Int = 365
        /// herald-api's Twilio Verify verifications and their sends (`herald.verify_verifications`,
        /// `herald.verify_send_attempts`: numbers in clear), by their last change, once ended.
        public var verifyDays: Int = 30

        public init() {}

        /// Every `cleanup.purge.*` key with its effective value.
        public var effectiveValues: [String: Any] {
            [
                "cleanup.purge.job_runs_days": jobRunsDays, "cleanup.purge.dev_outbox_days": devOutboxDays,
                "cleanup.purge.event_outbox_days": eventOutboxDays, "cleanup.purge.cleanup_runs_days": cleanupRunsDays,
                "cleanup.purge.sms_days": smsDays, "cleanup.purge.sms_rate_counters_days": smsRateCountersDays,
                "cleanup.purge.sms_app_verifications_days": smsAppVerificationsDays, "cleanup.purge.sms_fallbacks_days": smsFallbacksDays,
                "cleanup.purge.sms_fraud_days": smsFraudDays, "cleanup.purge.sms_known_numbers_days": smsKnownNumbersDays,
                "cleanup.purge.push_days": pushDays, "cleanup.purge.email_days": emailDays,
                "cleanup.purge.apple_attempts_days": appleAttemptsDays,
                "cleanup.purge.apple_notifications_days": appleNotificationsDays,
                "cleanup.purge.apple_relay_addresses_days": appleRelayAddressesDays,
                "cleanup.purge.verify_days": verifyDays,
            ]
        }

        public init(source: ConfigSource) throws {
            func days(_ name: String, _ value: Int) throws -> Int {
                try source.int("cleanup.purge.\(name)", default: value, range: 0...36_500)
            }
            jobRunsDays = try days("job_runs_days", jobRunsDays)
            devOutboxDays = try days("dev_outbox_days", devOutboxDays)
            eventOutboxDays = try days("event_outbox_days", eventOutboxDays)
            cleanupRunsDays = try days("cleanup_runs_days", cleanupRunsDays)
            smsDays = try days("sms_days", smsDays)
            smsRateCountersDays = try days("sms_rate_counters_days", smsRateCountersDays)
            smsAppVerificationsDays = try days("sms_app_verifications_days", smsAppVerificationsDays)
            smsFallbacksDays = try days("sms_fallbacks_days", smsFallbacksDays)
            smsFraudDays = try days("sms_fraud_days", smsFraudDays)
            if smsFraudDays == 1 {
                throw ConfigError(key: "cleanup.purge.sms_fraud_days", reason: """
                    must be 0 (kept) or at least 2, got 1: sms.fraud_guard.window_minutes counts up to a day of \
                    buckets, and a verification's mark must outlive its code (up to a day) to count it verified
                    """)
            }
            smsKnownNumbersDays = try days("sms_known_numbers_days", smsKnownNumbersDays)
            pushDays = try days("push_days", pushDays)
            emailDays = try days("email_days", emailDays)
            appleAttemptsDays = try days("apple_attempts_days", appleAttemptsDays)
            appleNotificationsDays = try days("apple_notifications_days", appleNotificationsDays)
            if (1...30).contains(appleNotificationsDays) {
                throw ConfigError(key: "cleanup.purge.apple_notifications_days", reason: """
                    must be 0 (kept) or more than 30, got \(appleNotificationsDays): a notification up to \
                    apple.notifications.max_age_seconds old (at most 30 days) is accepted, and its jti is what refuses its replay
                    """)
            }
            appleRelayAddressesDays = try days("apple_relay_addresses_days", appleRelayAddressesDays)
            verifyDays = try days("verify_days", verifyDays)
        }
    }
}
