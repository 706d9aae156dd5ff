import AMQP
import Tracing

/// W3C trace context (`traceparent`, `tracestate`) in a message's AMQP headers: what a
/// publisher injects and a worker extracts (docs/wire-contract.md, "Trace context").
public enum AMQPTraceCarrier {
    public static let traceparent = "traceparent"
    public static let tracestate = "tracestate"
    public static let keys = [traceparent, tracestate]

    /// Adds the current span's context to `headers` (nothing without a current span, or when
    /// the active instrument is the no-op one).
    public static func inject(_ context: InstrumentationContext, into headers: inout AMQPTable) {
        InstrumentationSystem.instrument.inject(context, into: &headers, using: Injector())
    }

    /// The publisher's context from `headers`; nil when it sent none. Only
    /// the two trace headers are handed to the propagator: a malformed one makes it log the
    /// carrier, which must not be every header of the message.
    public static func extract(_ headers: AMQPTable) -> InstrumentationContext? {
        var carrier: [String: String] = [:]
        for key in keys {
            switch headers[key] {
            case .string(let text)?: carrier[key] = text
            case .bytes(let bytes)?: carrier[key] = String(decoding: bytes, as: UTF8.self)
            default: break
            }
        }
        guard !carrier.isEmpty else { return nil }
        var context = InstrumentationContext.topLevel
        InstrumentationSystem.instrument.extract(carrier, into: &context, using: DictionaryExtractor())
        return context
    }

    struct Injector: Tracing.Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout AMQPTable) {
            carrier[key] = .string(value)
        }
    }

    struct DictionaryExtractor: Extractor {
        func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    }
}
