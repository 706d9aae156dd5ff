import HeraldRuntime
/// `cleanup.*`: how `herald-cleanup` works through a run, and how long purged rows are kept.
/// Whether cleanup is enabled, and the account retention, are not configuration: they are the
/// policy row in the database (`heraldctl cleanup enable|disable`), so every worker agrees.
public struct CleanupConfiguration: ConfigurationSection {
    public static let key = "cleanup"

    /// Accounts deleted per batch transaction (also rows per purge batch).
    public var batchSize: Int = 1_000
    /// A run deletes at most this many accounts (the per-run cap); the rest wait for the next run.
    public var maxAccountsPerRun: Int = 1_000_000
    /// Rows (accounts and purged rows) each worker deletes per second at most; 0: unlimited.
    public var rateLimitPerSecond: Int = 20_000
    /// `heraldctl cleanup schedule` publishes this many `cleanup.run` jobs for a run, so this
    /// many workers (or concurrent loops) share it.
    public var fanOut: Int = 2
    /// An active run with no batch for this long is stale: `cleanup schedule` resumes it.
    public var staleAfterSeconds: Int = 600
    /// When every eligible row left is locked by someone else, wait this long between looks.
    public var lockedRetryMilliseconds: Int = 200
    /// ... and give up on the locked rows after this long (the next run takes them).
    public var lockedGiveUpSeconds: Int = 30
    /// Pauses after each batch so cleanup leaves the database to live traffic (`cleanup.pace.*`).
    public var pace = CleanupPace()
    /// Retention of purged tables, in days; 0 disables that target.
    public var purge = Purge()

    /// `cleanup.purge.*_days`
    public struct Purge: Sendable {
        /// Finished rows of the idempotency ledger (`herald.job_runs`).
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
        /// Push verifications (by expiry) and device tokens not seen for this long.
        public var pushDays: Int = 30
        /// Email requests and link codes (`herald.email_requests`, `herald.email_codes`: codes past their expiry).
        public var emailDays: Int = 30

        public init() {}
    }

    public init() {}

    /// Every `cleanup.*` key with its effective value (for `heraldctl config check`).
    public var effectiveValues: [String: Any] {
        [
            "cleanup.batch_size": batchSize, "cleanup.max_accounts_per_run": maxAccountsPerRun,
            "cleanup.rate_limit_per_second": rateLimitPerSecond, "cleanup.fan_out": fanOut,
            "cleanup.stale_after_seconds": staleAfterSeconds, "cleanup.locked_retry_ms": lockedRetryMilliseconds,
            "cleanup.locked_give_up_seconds": lockedGiveUpSeconds,
            "cleanup.purge.job_runs_days": purge.jobRunsDays, "cleanup.purge.dev_outbox_days": purge.devOutboxDays,
            "cleanup.purge.event_outbox_days": purge.eventOutboxDays, "cleanup.purge.cleanup_runs_days": purge.cleanupRunsDays,
            "cleanup.purge.sms_days": purge.smsDays, "cleanup.purge.sms_rate_counters_days": purge.smsRateCountersDays,
            "cleanup.purge.push_days": purge.pushDays,
            "cleanup.purge.email_days": purge.emailDays,
        ].merging(pace.effectiveValues) { current, _ in current }
    }

    public init(source: ConfigSource) throws {
        self.batchSize = try source.int("cleanup.batch_size", default: batchSize, range: 1...100_000)
        self.maxAccountsPerRun = try source.int("cleanup.max_accounts_per_run", default: maxAccountsPerRun, range: 1...1_000_000_000)
        self.rateLimitPerSecond = try source.int("cleanup.rate_limit_per_second", default: rateLimitPerSecond, range: 0...10_000_000)
        self.fanOut = try source.int("cleanup.fan_out", default: fanOut, range: 1...64)
        self.staleAfterSeconds = try source.int("cleanup.stale_after_seconds", default: staleAfterSeconds, range: 10...86_400)
        self.lockedRetryMilliseconds = try source.int("cleanup.locked_retry_ms", default: lockedRetryMilliseconds, range: 10...60_000)
        self.lockedGiveUpSeconds = try source.int("cleanup.locked_give_up_seconds", default: lockedGiveUpSeconds, range: 0...3_600)
        self.pace = try CleanupPace(source: source)
        self.purge.jobRunsDays = try source.int("cleanup.purge.job_runs_days", default: purge.jobRunsDays, range: 0...36_500)
        self.purge.devOutboxDays = try source.int("cleanup.purge.dev_outbox_days", default: purge.devOutboxDays, range: 0...36_500)
        self.purge.eventOutboxDays = try source.int("cleanup.purge.event_outbox_days", default: purge.eventOutboxDays, range: 0...36_500)
        self.purge.cleanupRunsDays = try source.int("cleanup.purge.cleanup_runs_days", default: purge.cleanupRunsDays, range: 0...36_500)
        self.purge.smsDays = try source.int("cleanup.purge.sms_days", default: purge.smsDays, range: 0...36_500)
        self.purge.smsRateCountersDays = try source.int("cleanup.purge.sms_rate_counters_days", default: purge.smsRateCountersDays, range: 0...36_500)
        self.purge.pushDays = try source.int("cleanup.purge.push_days", default: purge.pushDays, range: 0...36_500)
        self.purge.emailDays = try source.int("cleanup.purge.email_days", default: purge.emailDays, range: 0...36_500)
    }
}

extension HeraldConfiguration {
    /// `cleanup.*`
    public var cleanup: CleanupConfiguration {
        get { self[CleanupConfiguration.self] }
        set { self[CleanupConfiguration.self] = newValue }
    }
}
