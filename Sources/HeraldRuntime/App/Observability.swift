import Prometheus
import ServiceLifecycle

/// What an executable's ``Bootstrap/main(_:logLabel:stopped:load:run:)`` set up for its run.
public struct Observability: Sendable {
    /// `/metrics`' registry.
    public let registry: PrometheusCollectorRegistry
    /// The span exporter (nil when tracing is off). First in the executable's group, so it is the
    /// last to stop and exports the spans of the drain.
    public let tracing: (any Service)?

    public init(registry: PrometheusCollectorRegistry, tracing: (any Service)? = nil) {
        self.registry = registry
        self.tracing = tracing
    }
}
