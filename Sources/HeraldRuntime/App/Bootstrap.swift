import Logging
import Metrics
import Prometheus

/// Process-wide set-up, done once by each executable: JSON (or text) logs with masking,
/// and a Prometheus registry behind swift-metrics.
public enum Bootstrap {
    public static func logging(_ configuration: LogConfiguration) {
        let level = Logger.Level(rawValue: configuration.level.rawValue) ?? .info
        let json = configuration.format == .json
        LoggingSystem.bootstrap { label in JSONLogHandler(label: label, level: level, json: json) }
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
