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

    public init() {}

    /// Every `cleanup.*` key with its effective value (for `heraldctl config check`).
    public var effectiveValues: [String: Any] {
        [
            "cleanup.batch_size": batchSize, "cleanup.max_accounts_per_run": maxAccountsPerRun,
            "cleanup.rate_limit_per_second": rateLimitPerSecond, "cleanup.fan_out": fanOut,
            "cleanup.stale_after_seconds": staleAfterSeconds, "cleanup.locked_retry_ms": lockedRetryMilliseconds,
            "cleanup.locked_give_up_seconds": lockedGiveUpSeconds,
        ].merging(pace.effectiveValues) { current, _ in current }.merging(purge.effectiveValues) { current, _ in current }
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
        self.purge = try Purge(source: source)
    }
}

extension HeraldConfiguration {
    /// `cleanup.*`
    public var cleanup: CleanupConfiguration {
        get { self[CleanupConfiguration.self] }
        set { self[CleanupConfiguration.self] = newValue }
    }
}
