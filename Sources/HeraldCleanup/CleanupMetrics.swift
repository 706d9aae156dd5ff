import HeraldRuntime
import Metrics

/// Cleanup's metrics (names and labels in docs/operations.md), through swift-metrics.
public struct CleanupMetrics: Sendable {
    public init() {}

    /// `herald_cleanup_accounts_deleted_total`
    public func deleted(_ count: Int) {
        Counter(label: "herald_cleanup_accounts_deleted_total").increment(by: count)
    }

    /// `herald_cleanup_rows_purged_total{target}`
    public func purged(_ count: Int, target: String) {
        Counter(label: "herald_cleanup_rows_purged_total", dimensions: [("target", target)]).increment(by: count)
    }

    /// `herald_cleanup_partitions_dropped_total{target}`: days of a day-partitioned table dropped.
    public func droppedDays(_ count: Int, target: String) {
        Counter(label: "herald_cleanup_partitions_dropped_total", dimensions: [("target", target)]).increment(by: count)
    }

    /// `herald_cleanup_runs_total{outcome}`: what this worker's part of a run ended with:
    /// completed, capped, cancelled, ended (another worker finished it), interrupted, dry_run.
    public func run(outcome: String) {
        Counter(label: "herald_cleanup_runs_total", dimensions: [("outcome", outcome)]).increment()
    }

    /// `herald_cleanup_run_failures_total`: a worker's part of a run failed (it is retried).
    public func failure() {
        Counter(label: "herald_cleanup_run_failures_total").increment()
    }

    /// `herald_cleanup_batch_duration_seconds`: one batch transaction.
    public func batch(_ duration: Duration) {
        Metrics.Timer(label: "herald_cleanup_batch_duration_seconds").recordNanoseconds(duration.nanoseconds)
    }

    /// `herald_cleanup_pause_seconds`: the pause a batch's duration set (`cleanup.pace.*`).
    public func paused(_ duration: Duration) {
        Metrics.Timer(label: "herald_cleanup_pause_seconds").recordNanoseconds(duration.nanoseconds)
    }

    /// `herald_cleanup_working`: 1 while this process works a run.
    public var working: Meter { Meter(label: "herald_cleanup_working") }
}
