import AMQP
import Tracing

extension JobRunner {
    /// ``process(_:_:started:)`` in a `process <queue>` consumer span when tracing is on, as
    /// OpenTelemetry's messaging conventions describe it for RabbitMQ: its parent is the
    /// publisher's span (the message's `traceparent`), and it links to it too, as they ask of a
    /// process span; without a `traceparent` it starts a trace of its own. Its children:
    /// `decode` (done on the connection thread when the message was read), `claim`,
    /// `handle <type>` (with the provider calls under it), `commit`, and the settlement
    /// (`ack`, `nack`, or `publish` to a delay queue or the dead-letter exchange). A retried
    /// message keeps its `traceparent`, so each try is another `process` span of the one trace.
    func processTraced(_ received: Received) async {
        guard let tracer = HeraldTracing.tracer else {
            await process(received.delivery, received.decoded, started: received.at)
            return
        }
        let delivery = received.delivery
        let envelope = received.decoded.0
        let queue = topology.workQueue(kind)
        let creation = AMQPTraceCarrier.extract(delivery.properties.headers)
        let span = tracer.startSpan("process \(queue)", context: creation ?? .topLevel, ofKind: .consumer,
                                    at: received.decoding?.lowerBound ?? DefaultTracerClock.now)
        if let creation { span.addLink(SpanLink(context: creation, attributes: [:])) }
        span.updateAttributes { attributes in
            attributes.messaging(operation: "process", type: "process", exchange: delivery.exchange, routingKey: delivery.routingKey, queue: queue)
            attributes[TraceKey.messageID] = envelope.messageID
            attributes[TraceKey.conversationID] = envelope.correlationID
            attributes[TraceKey.deliveryTag] = Int64(truncatingIfNeeded: delivery.deliveryTag)
            attributes[TraceKey.bodySize] = delivery.bodySize
            attributes[TraceKey.jobType] = envelope.typeName
        }
        if let decoding = received.decoding {
            tracer.startSpan("decode", context: span.context, ofKind: .internal, at: decoding.lowerBound).end(at: decoding.upperBound)
        }
        await InstrumentationContext.$current.withValue(span.context) {
            await process(delivery, received.decoded, started: received.at)
        }
        span.end()
    }
}
