import Logging
import OTel
import ServiceLifecycle
import Synchronization
import Tracing

/// Tracing in a Herald executable: off unless `tracing.enabled`, and then free — ``tracer``
/// is nil and no span is made (a span through swift-distributed-tracing's no-op tracer
/// still costs a lock, a cast and a task-local push each: docs/benchmarks-journal.md, "Tracing").
public enum HeraldTracing {
    private static let on = Atomic<Bool>(false)

    /// The tracer Herald's spans go to, nil when tracing is off. The installed one (or a
    /// task's own, `withTracer`, in tests) once ``bootstrap(_:serviceName:)`` turned it on.
    public static var tracer: (any Tracer)? {
        on.load(ordering: .relaxed) ? InstrumentationSystem.tracer : nil
    }

    /// Installs the OTLP/HTTP exporter and returns the service that batches and exports the
    /// spans (run it first in the group, so it stops last and flushes what the drain ended);
    /// nil when tracing is off. Herald's keys are the only source: `OTEL_*` variables are not read.
    public static func bootstrap(_ configuration: TracingConfiguration, serviceName: String, logger: Logger) throws -> (any Service)? {
        guard configuration.enabled else { return nil }
        var otel = OTel.Configuration.default
        otel.serviceName = configuration.serviceName.isEmpty ? serviceName : configuration.serviceName
        otel.logs.enabled = false
        otel.metrics.enabled = false
        otel.diagnosticLogger = .custom(logger)
        otel.diagnosticLogLevel = .warning
        otel.traces.sampler = .parentBasedAlwaysOn
        if configuration.sampleRatio < 1, let sampler = type(of: otel.traces.sampler).parentBasedTraceIDRatio(ratio: configuration.sampleRatio) {
            otel.traces.sampler = sampler
        }
        otel.traces.batchSpanProcessor.scheduleDelay = .milliseconds(configuration.batchDelayMilliseconds)
        otel.traces.batchSpanProcessor.maxQueueSize = configuration.maxQueue
        otel.traces.batchSpanProcessor.maxExportBatchSize = configuration.maxBatch
        otel.traces.otlpExporter.endpoint = configuration.endpoint
        otel.traces.otlpExporter.protocol = configuration.wireProtocol == .json ? .httpJSON : .httpProtobuf
        otel.traces.otlpExporter.headers = configuration.headers
        otel.traces.otlpExporter.timeout = .milliseconds(configuration.timeoutMilliseconds)
        otel.traces.batchSpanProcessor.exportTimeout = .milliseconds(configuration.timeoutMilliseconds)
        let service = try OTel.bootstrap(configuration: otel, environment: [:])
        on.store(true, ordering: .relaxed)
        return service
    }

    /// `trace_id`, `span_id` and `trace_flags` of the current span, for every log line.
    static var logMetadata: Logger.MetadataProvider { OTel.makeLoggingMetadataProvider() }

    /// Turns ``tracer`` on without an exporter: unit tests, whose spans go to a task's
    /// `withTracer(InMemoryTracer())`.
    public static func enableForTesting() {
        on.store(true, ordering: .relaxed)
    }
}
