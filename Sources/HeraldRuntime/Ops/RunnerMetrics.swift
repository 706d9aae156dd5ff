import Metrics
import Synchronization

/// The job runner's metrics (names and labels are documented in docs/operations.md).
/// Created through swift-metrics, so a test can bootstrap a test kit instead of Prometheus.
public struct RunnerMetrics: Sendable {
    public let queue: String
    /// Counters made once per label set: every job counts at least one, and making a handle
    /// goes through the metrics factory's registry each time.
    private let counters = CounterHandles()

    public init(queue: String) {
        self.queue = queue
        inFlight = Meter(label: "herald_jobs_in_flight", dimensions: [("queue", queue)])
    }

    /// `herald_jobs_total{queue,type,outcome}`: completed, rejected, invalid, retried,
    /// dead_lettered, duplicate, deferred, requeued.
    public func job(_ type: String, outcome: String) {
        counters.counter("herald_jobs_total", [("queue", queue), ("type", type), ("outcome", outcome)]).increment()
    }

    /// `herald_job_duration_seconds{queue,type}`: delivery received to outcome committed and acked.
    public func duration(_ type: String, _ duration: Duration) {
        Metrics.Timer(label: "herald_job_duration_seconds", dimensions: [("queue", queue), ("type", type)])
            .recordNanoseconds(duration.nanoseconds)
    }

    /// `herald_jobs_in_flight{queue}`
    public let inFlight: Meter

    /// `herald_dead_letters_total{queue,category}`: invalid, exhausted.
    public func deadLetter(category: String) {
        counters.counter("herald_dead_letters_total", [("queue", queue), ("category", category)]).increment()
    }

    /// `herald_job_retries_total{queue,tier}`
    public func retry(tier: Int) {
        Counter(label: "herald_job_retries_total", dimensions: [("queue", queue), ("tier", String(tier))]).increment()
    }

    /// `herald_jobs_taken_over_total{queue}`: jobs claimed after their worker died mid-job;
    /// each is a possible duplicate side effect.
    public func takeover() {
        Counter(label: "herald_jobs_taken_over_total", dimensions: [("queue", queue)]).increment()
    }

    /// `herald_database_waits_total{queue}`: times a job waited for an unreachable database.
    public func databaseWait() {
        Counter(label: "herald_database_waits_total", dimensions: [("queue", queue)]).increment()
    }

    /// `herald_outcome_batch_size{queue}`: jobs committed per transaction.
    public func batch(size: Int) {
        Recorder(label: "herald_outcome_batch_size", dimensions: [("queue", queue)], aggregate: true).record(size)
    }
}

extension Duration {
    /// The duration in seconds, for rates, sleeps and CPU shares.
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Counter handles by label and dimensions, made on first use.
final class CounterHandles: Sendable {
    private let handles = Mutex<[String: Counter]>([:])

    func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        let key = dimensions.reduce(into: label) { key, dimension in key += "\u{1F}\(dimension.0)=\(dimension.1)" }
        return handles.withLock { handles in
            if let counter = handles[key] { return counter }
            let counter = Counter(label: label, dimensions: dimensions)
            handles[key] = counter
            return counter
        }
    }
}
