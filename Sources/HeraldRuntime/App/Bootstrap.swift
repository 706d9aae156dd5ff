import Logging
import Metrics
import NIOCore
import NIOPosix
import Prometheus

/// Process-wide set-up, done once by each executable: JSON (or text) logs with masking,
/// and a Prometheus registry behind swift-metrics.
public enum Bootstrap {
    /// Runs Swift concurrency's tasks on NIO's event loops, the threads PostgreSQL's, the
    /// providers' and SMTP's answers arrive on, instead of the concurrency runtime's own pool:
    /// a job no longer hops between the two for every query and request. herald-sms: about
    /// 10 % less worker CPU per job (docs/benchmarks-journal.md). The price: a handler must never
    /// block its thread (no blocking I/O, sleeps or waits outside `await`), since that thread
    /// also carries I/O. Each worker executable calls it first, in `main`, before any task;
    /// in-process workers (tests, herald-bench) keep the default pool.
    @discardableResult
    public static func concurrencyOnEventLoops() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// `traceIDs`: every line also carries the current span's `trace_id`, `span_id` and
    /// `trace_flags` (tracing on; off, no line pays for the lookup).
    public static func logging(_ configuration: LogConfiguration, traceIDs: Bool = false) {
        let level = Logger.Level(rawValue: configuration.level.rawValue) ?? .info
        let json = configuration.format == .json
        LoggingSystem.bootstrap({ label, provider in
            var handler = JSONLogHandler(label: label, level: level, json: json)
            handler.metadataProvider = provider
            return handler
        }, metadataProvider: traceIDs ? HeraldTracing.logMetadata : nil)
    }

    public static func metrics() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }
}

/// Exit codes every Herald executable uses (documented in docs/operations.md).
public enum ExitCode: Int32, Sendable {
    case ok = 0
    case failure = 1
    case usage = 64
    /// A dependency (broker, database) could not be reached.
    case unavailable = 69
    /// The shutdown passed its bound (``ShutdownBound``): something did not stop when asked.
    case stuck = 70
    /// The configuration is invalid.
    case configuration = 78
}
