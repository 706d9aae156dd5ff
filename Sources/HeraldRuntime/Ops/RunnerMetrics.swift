import Metrics
import Synchronization

/// The job runner's metrics (names and labels are documented in docs/operations.md).
/// Created through swift-metrics, so a test can bootstrap a test kit instead of Prometheus.
public struct RunnerMetrics: Sendable {
    public let queue: String
    /// Counters made once per label set, looked up by their label values: every job counts
    /// at least one, and making a handle goes through the metrics factory's registry each time.
    private let jobs: MetricHandles<JobKey, Counter>
    private let deadLetters: MetricHandles<String, Counter>
    private let durations: MetricHandles<String, Metrics.Timer>

    private struct JobKey: Hashable, Sendable {
        var type: String
        var outcome: String
    }

    public init(queue: String) {
        self.queue = queue
        inFlight = Meter(label: "herald_jobs_in_flight", dimensions: [("queue", queue)])
        jobs = MetricHandles { key in
            Counter(label: "herald_jobs_total", dimensions: [("queue", queue), ("type", key.type), ("outcome", key.outcome)])
        }
        deadLetters = MetricHandles { category in
            Counter(label: "herald_dead_letters_total", dimensions: [("queue", queue), ("category", category)])
        }
        durations = MetricHandles { type in
            Metrics.Timer(label: "herald_job_duration_seconds", dimensions: [("queue", queue), ("type", type)])
        }
    }

    /// `herald_jobs_total{queue,type,outcome}`: completed, rejected, invalid, retried,
    /// dead_lettered, duplicate, deferred, requeued.
    public func job(_ type: String, outcome: String) {
        jobs.handle(JobKey(type: type, outcome: outcome)).increment()
    }

    /// `herald_job_duration_seconds{queue,type}`: delivery received to outcome committed and acked.
    public func duration(_ type: String, _ duration: Duration) {
        durations.handle(type).recordNanoseconds(duration.nanoseconds)
    }

    /// `herald_jobs_in_flight{queue}`
    public let inFlight: Meter

    /// `herald_dead_letters_total{queue,category}`: invalid, exhausted.
    public func deadLetter(category: String) {
        deadLetters.handle(category).increment()
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

    /// Whole nanoseconds, saturating at Int64's bounds (a deadline of "forever").
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowAgain ? (seconds < 0 ? .min : .max) : total
    }
}

/// Handles of one metric (counters, timers) by the label values that vary, made on first use
/// by `make`: making a handle goes through the metrics factory's registry each time, and a hot
/// path (every job, every API request) would otherwise do that per event.
public final class MetricHandles<Key: Hashable & Sendable, Handle: Sendable>: Sendable {
    private let handles = Mutex<[Key: Handle]>([:])
    private let make: @Sendable (Key) -> Handle

    public init(make: @escaping @Sendable (Key) -> Handle) { self.make = make }

    public func handle(_ key: Key) -> Handle {
        handles.withLock { handles in
            if let handle = handles[key] { return handle }
            let handle = make(key)
            handles[key] = handle
            return handle
        }
    }
}
