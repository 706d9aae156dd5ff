/// `runner.*`: how the shared job runner decodes, retries and drains.
public struct RunnerConfiguration: Sendable {
    /// Larger bodies are dead-lettered unread.
    public var maxMessageBytes: Int = 65_536
    /// Tries of a job that keeps failing transiently, the first included; then dead-letter.
    public var maxAttempts: Int = 5
    /// One delay queue per entry; try N waits `retryDelaysMilliseconds[min(N-1, last)]`.
    public var retryDelaysMilliseconds: [Int] = [1_000, 5_000, 30_000, 120_000]
    /// A claimed job whose worker is alive is not taken over before this lease ends.
    public var leaseSeconds: Int = 300
    /// SIGTERM: in-flight jobs get this long to finish; the rest are requeued.
    public var drainTimeoutSeconds: Int = 25
    /// One run of a handler that takes longer is taken for hung (a database call that never
    /// answers) and run again; 0: no limit. Handlers that run long by design (cleanup) have none.
    public var handlerTimeoutSeconds: Int = 120
    /// Claims grouped into one statement, and finished jobs into one transaction, at most.
    public var outcomeBatchSize: Int = 128

    public init() {}

    init(source: ConfigSource) throws {
        self.maxMessageBytes = try source.int("runner.max_message_bytes", default: maxMessageBytes, range: 256...16_777_216)
        self.maxAttempts = try source.int("runner.max_attempts", default: maxAttempts, range: 1...100)
        self.retryDelaysMilliseconds = try source.intList("runner.retry_delays_ms", default: retryDelaysMilliseconds, range: 10...86_400_000)
        guard !retryDelaysMilliseconds.isEmpty else {
            throw ConfigError(key: "runner.retry_delays_ms", reason: "needs at least one delay")
        }
        self.leaseSeconds = try source.int("runner.lease_seconds", default: leaseSeconds, range: 1...86_400)
        self.drainTimeoutSeconds = try source.int("runner.drain_timeout_seconds", default: drainTimeoutSeconds, range: 0...3_600)
        self.handlerTimeoutSeconds = try source.int("runner.handler_timeout_seconds", default: handlerTimeoutSeconds, range: 0...86_400)
        self.outcomeBatchSize = try source.int("runner.outcome_batch_size", default: outcomeBatchSize, range: 1...10_000)
    }
}
