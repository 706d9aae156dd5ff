import AMQP
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
        #expect(try HeraldTracing.bootstrap(defaults, serviceName: "herald-sms") == nil)
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

    @Test func theCarrierWritesStringsAndReadsOnlyTheTraceHeaders() throws {
        var headers: AMQPTable = ["x-herald-attempt": .int(2)]
        let tracer = InMemoryTracer()
        withTracer(tracer) {
            tracer.withSpan("publish", ofKind: .producer) { span in AMQPTraceCarrier.inject(span.context, into: &headers) }
        }
        #expect(headers.count > 1 && headers.values.allSatisfy { if case .string = $0 { true } else if case .int = $0 { true } else { false } })
        #expect(AMQPTraceCarrier.extract(["x-herald-attempt": .int(2)]) == nil, "no trace header: no context")
        #expect(AMQPTraceCarrier.extract(["traceparent": .bytes(Array("00-x-y-01".utf8))]) != nil, "bytes are read as text")
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
        #expect(inner.status?.code == .error && inner.errors.count == 1)
    }
}
