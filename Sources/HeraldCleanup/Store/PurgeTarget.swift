import HeraldRuntime
/// A table whose old rows a cleanup run deletes: rows whose `timeColumn` is older than
/// `retentionDays` (and that match `predicate`). Another worker's table joins with one line
/// in ``registry(_:)``, e.g. `PurgeTarget("sms_verifications", table: "herald.sms_verifications",
/// timeColumn: "expires_at", retentionDays: configuration.purge.smsVerificationsDays)`.
/// Give `timeColumn` an index: each purge batch scans by it.
///
/// A table partitioned by day (`byDay`, functions/partitions.sql) is not deleted from: each run
/// drops its days wholly past retention (`created_at` before the UTC day `retentionDays` ago
/// began), whatever their rows, with `herald.partitions_drop`.
public struct PurgeTarget: Sendable, Equatable {
    /// The key in `cleanup_runs.purged` and in metrics.
    public var name: String
    /// Schema-qualified table (a constant of this code, never input).
    public var table: String
    public var timeColumn: String
    /// 0 disables the target.
    public var retentionDays: Int
    /// Extra SQL condition on the row (e.g. only finished rows).
    public var predicate: String
    /// Partitioned by day of `timeColumn`: dropped a day at a time.
    public var byDay: Bool

    public init(_ name: String, table: String, timeColumn: String, retentionDays: Int, predicate: String = "true") {
        self.name = name
        self.table = table
        self.timeColumn = timeColumn
        self.retentionDays = retentionDays
        self.predicate = predicate
        self.byDay = false
    }

    /// A table partitioned by day of `created_at`; `predicate`: the rows its drop keeps
    /// (moves on) rather than drops.
    public static func byDay(_ name: String, table: String, retentionDays: Int, keeping kept: String? = nil) -> PurgeTarget {
        var target = PurgeTarget(name, table: table, timeColumn: "created_at", retentionDays: retentionDays,
                                 predicate: kept.map { "NOT (\($0))" } ?? "true")
        target.byDay = true
        return target
    }

    /// The SQL instant before which its rows are past retention.
    public var cutoff: String { "now() - make_interval(days => \(retentionDays))" }

    /// The SQL condition of a row this target purges now.
    public var condition: String {
        if byDay {
            // The rows of the days herald.partitions_drop would drop (functions/partitions.sql).
            return "tableoid IN (SELECT partition::oid FROM herald.partitions_due('\(table)', \(cutoff))) AND (\(predicate))"
        }
        return "\(timeColumn) < \(cutoff) AND (\(predicate))"
    }

    /// Every purge target, with retentions from the configuration. Disabled ones included.
    public static func registry(_ configuration: CleanupConfiguration) -> [PurgeTarget] {
        [
            // Unfinished jobs move on to the current day instead (their row runs them at most once).
            .byDay("job_runs", table: "herald.job_runs", retentionDays: configuration.purge.jobRunsDays,
                   keeping: "status IN ('running', 'retrying')"),
            PurgeTarget("dev_outbox", table: "herald.dev_outbox", timeColumn: "created_at",
                        retentionDays: configuration.purge.devOutboxDays),
            .byDay("event_outbox", table: "herald.event_outbox", retentionDays: configuration.purge.eventOutboxDays),
            PurgeTarget("cleanup_runs", table: "herald.cleanup_runs", timeColumn: "ended_at",
                        retentionDays: configuration.purge.cleanupRunsDays,
                        predicate: "ended_at IS NOT NULL AND status NOT IN ('scheduled', 'running')"),
            // Verifications first: a purged code would take its verifications with it (ON DELETE CASCADE).
            PurgeTarget("sms_verifications", table: "herald.sms_verifications", timeColumn: "created_at",
                        retentionDays: configuration.purge.smsDays),
            .byDay("sms_send_attempts", table: "herald.sms_send_attempts", retentionDays: configuration.purge.smsDays),
            PurgeTarget("sms_codes", table: "herald.sms_codes", timeColumn: "expires_at",
                        retentionDays: configuration.purge.smsDays),
            PurgeTarget("sms_rate_counters", table: "herald.sms_rate_counters", timeColumn: "expires_at",
                        retentionDays: configuration.purge.smsRateCountersDays),
            // A fallback's sealed code past any code's life (the fallback ends it itself, but not every one).
            PurgeTarget("sms_fallbacks", table: "herald.sms_fallbacks", timeColumn: "created_at",
                        retentionDays: configuration.purge.smsFallbacksDays),
            // The app evidence accepted for a verification: it matters while its job may be redelivered.
            PurgeTarget("sms_app_verifications", table: "herald.sms_app_verifications", timeColumn: "created_at",
                        retentionDays: configuration.purge.smsAppVerificationsDays),
            // The fraud guard's buckets and marks (the check itself deleted them, 1 call in 100, until issue 31).
            PurgeTarget("sms_fraud_counts", table: "herald.sms_fraud_counts", timeColumn: "minute",
                        retentionDays: configuration.purge.smsFraudDays),
            PurgeTarget("sms_fraud_marks", table: "herald.sms_fraud_marks", timeColumn: "created_at",
                        retentionDays: configuration.purge.smsFraudDays),
            // What the guard let through per scope and minute (issue 48), kept from the marks.
            PurgeTarget("sms_fraud_let_through", table: "herald.sms_fraud_let_through", timeColumn: "minute",
                        retentionDays: configuration.purge.smsFraudDays),
            // A scope's usual traffic, as its floor last read it (recomputed hourly while in use).
            PurgeTarget("sms_fraud_baselines", table: "herald.sms_fraud_baselines", timeColumn: "computed_at",
                        retentionDays: configuration.purge.smsFraudDays),
            // Wrong-code counts per number (issue 16): past expires_at they no longer count.
            PurgeTarget("sms_guess_failures", table: "herald.sms_guess_failures", timeColumn: "expires_at",
                        retentionDays: configuration.purge.smsRateCountersDays),
            PurgeTarget("push_verifications", table: "herald.push_verifications", timeColumn: "expires_at",
                        retentionDays: configuration.purge.pushDays),
            PurgeTarget("device_tokens", table: "herald.device_tokens", timeColumn: "updated_at",
                        retentionDays: configuration.purge.pushDays),
            .byDay("push_send_attempts", table: "herald.push_send_attempts", retentionDays: configuration.purge.pushDays),
            // Codes first (they reference their request), then the requests.
            PurgeTarget("email_codes", table: "herald.email_codes", timeColumn: "expires_at",
                        retentionDays: configuration.purge.emailDays),
            PurgeTarget("email_requests", table: "herald.email_requests", timeColumn: "created_at",
                        retentionDays: configuration.purge.emailDays),
            .byDay("email_send_attempts", table: "herald.email_send_attempts", retentionDays: configuration.purge.emailDays),
            // Send-limit buckets (keys: addresses, client IPs), as SMS's counters.
            PurgeTarget("email_rate_counters", table: "herald.email_rate_counters", timeColumn: "expires_at",
                        retentionDays: configuration.purge.smsRateCountersDays),
            // Every call to Apple of a job.
            .byDay("apple_attempts", table: "herald.apple_attempts", retentionDays: configuration.purge.appleAttemptsDays),
            // Apple's notifications acted on: their jti refuses a replay while one could still be accepted.
            PurgeTarget("apple_notifications", table: "herald.apple_notifications", timeColumn: "received_at",
                        retentionDays: configuration.purge.appleNotificationsDays),
            // Relay-address markings not changed for that long (by the index of runtime migration 0006).
            PurgeTarget("apple_relay_addresses", table: "herald.apple_relay_addresses", timeColumn: "updated_at",
                        retentionDays: configuration.purge.appleRelayAddressesDays),
            // Numbers that verified a code (HMACs), which the fraud guard lets through a pause: not verified for that long.
            PurgeTarget("sms_known_numbers", table: "herald.sms_known_numbers", timeColumn: "verified_at",
                        retentionDays: configuration.purge.smsKnownNumbersDays),
            // herald-api's Twilio Verify verifications (their numbers in clear), with their send attempts
            // (ON DELETE CASCADE), once they ended (a pending one past its validity has).
            PurgeTarget("verify_verifications", table: "herald.verify_verifications", timeColumn: "updated_at",
                        retentionDays: configuration.purge.verifyDays, predicate: "status <> 'pending' OR expires_at < now()"),
        ]
    }
}
