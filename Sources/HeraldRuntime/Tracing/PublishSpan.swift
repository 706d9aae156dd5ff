import AMQP
import Tracing

/// The producer span of a job's publish (`publish <exchange>`, OpenTelemetry's messaging
/// attributes) whose W3C context goes into the message's headers, for the worker's spans to
/// continue: HeraldClient's publish, and a job written to the outbox (herald-api's starts),
/// whose headers the relay publishes with it.
public enum PublishSpan {
    /// Runs `body` with the headers to publish: in a span of `tracer` carrying its context, or
    /// none without a tracer (nothing spent on spans).
    public static func run<T: Sendable>(tracer: (any Tracer)?, exchange: String, routingKey: String, messageID: String, correlationID: String?,
                                        jobType: String, _ body: (AMQPTable) async throws -> T) async throws -> T {
        guard let tracer else { return try await body([:]) }
        return try await tracer.withSpan("publish \(exchange)", ofKind: .producer) { span in
            span.updateAttributes { attributes in
                attributes.messaging(operation: "publish", type: "send", exchange: exchange, routingKey: routingKey)
                attributes[TraceKey.messageID] = messageID
                attributes[TraceKey.conversationID] = correlationID
                attributes[TraceKey.jobType] = jobType
            }
            var headers: AMQPTable = [:]
            AMQPTraceCarrier.inject(span.context, into: &headers)
            return try await body(headers)
        }
    }
}
