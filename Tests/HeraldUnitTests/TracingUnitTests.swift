import AMQP
import Logging
import InMemoryTracing
import Testing
import Tracing
@testable import HeraldRuntime

/// `tracing.*`, the AMQP trace carrier, and Herald's span helper (the executables' traces are
/// tested end to end in HeraldIntegrationTests' TracingTests).
@Suite struct TracingUnitTests {
    func tracing(_ values: [String: Any]) throws -> TracingConfiguration {
        try HeraldConfiguration(source: ConfigSource(values: values)).tracing
    }

    @Test func offByDefaultAndMakesNoExporter() throws {
        let defaults = try tracing([:])
        #expect(!defaults.enabled && defaults.wireProtocol == .protobuf && defaults.endpoint == "http://localhost:4318/v1/traces")
        #expect(try HeraldTracing.bootstrap(defaults, serviceName: "herald-sms", logger: Logger(label: "test")) == nil)
    }

    @Test func keysAreReadAndBadOnesNamed() throws {
        let read = try tracing(["tracing.enabled": true, "tracing.endpoint": "https://otel.example.com/v1/traces", "tracing.protocol": "http/json",
                                "tracing.headers": "X-Api-Key=abc=def, Team=herald", "tracing.sample_ratio": "0.25"])
        #expect(read.wireProtocol == .json && read.sampleRatio == 0.25)
        #expect(read.headers.map { "\($0.0):\($0.1)" } == ["X-Api-Key:abc=def", "Team:herald"])
        let cases: [([String: Any], String)] = [
            (["tracing.enabled": true, "tracing.endpoint": "collector:4318"], "tracing.endpoint"),
            (["tracing.enabled": true, "tracing.endpoint": "http://collector.example.com:4318/v1/traces"], "tracing.endpoint"),
            (["tracing.protocol": "grpc"], "tracing.protocol"),
            (["tracing.sample_ratio": 1.5], "tracing.sample_ratio"),
            (["tracing.headers": "secret-token-without-a-name"], "tracing.headers"),
        ]
        for (values, key) in cases {
            let error = #expect(throws: ConfigError.self) { try tracing(values) }
            #expect(error?.key == key, "\(values)")
            #expect(error?.description.contains("secret-token") == false, "a header's value is never shown")
        }
        // Clear text off loopback only when asked for.
        let insecure = try tracing(["tracing.enabled": true, "tracing.endpoint": "http://collector.example.com:4318/v1/traces",
                                    "tracing.allow_insecure_transport": true])
        #expect(insecure.allowInsecureTransport)
    }

    @Test func theCarrierWritesStringsAndHandsOnlyTheTraceHeadersToThePropagator() throws {
        let tracer = InMemoryTracer()
        var headers: AMQPTable = ["x-herald-attempt": .int(2)]
        var injected: [String: String] = [:]
        withTracer(tracer) {
            tracer.withSpan("publish", ofKind: .producer) { span in
                AMQPTraceCarrier.inject(span.context, into: &headers)
                injected = tracer.performedContextInjections.last?.values ?? [:]
            }
        }
        #expect(!injected.isEmpty)
        for (key, value) in injected { #expect(headers[key] == .string(value), "\(key) written as a string") }
        #expect(headers["x-herald-attempt"] == .int(2), "the other headers are kept")

        // Extraction: nothing without a trace header; with one, the propagator sees the two trace
        // headers (bytes read as text) and none of the message's other headers.
        withTracer(tracer) {
            #expect(AMQPTraceCarrier.extract(["x-herald-attempt": .int(2)]) == nil)
            _ = AMQPTraceCarrier.extract(["traceparent": .bytes(Array("00-abc-def-01".utf8)), "tracestate": .string("k=v"),
                                          "x-herald-last-error": .string("+15551234567 refused")])
        }
        let carrier = try #require(tracer.performedContextExtractions.last?.carrier as? [String: String])
        #expect(carrier == ["traceparent": "00-abc-def-01", "tracestate": "k=v"])
    }

    @Test func spansNestAndRecordErrors() async throws {
        struct Failure: Error {}
        HeraldTracing.enableForTesting()
        let tracer = InMemoryTracer()
        await withTracer(tracer) {
            await HeraldTracing.withSpan("process") { outer in
                #expect(outer != nil)
                _ = try? await HeraldTracing.withSpan("handle") { _ in throw Failure() }
            }
        }
        let spans = tracer.finishedSpans
        let outer = try #require(spans.first { $0.operationName == "process" })
        let inner = try #require(spans.first { $0.operationName == "handle" })
        #expect(inner.spanContext.parentSpanID == outer.spanContext.spanID)
        #expect(inner.status?.code == .error && inner.errors.isEmpty, "failed, without the error's description")
        #expect(inner.attributes["error.type"] != nil)
    }
}
