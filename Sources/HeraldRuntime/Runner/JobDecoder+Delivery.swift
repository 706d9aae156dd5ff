import AMQP

// Beside the runner, not in Wire/: the wire rules (and the fuzz targets built from Wire/'s
// files) know a body and its properties, not the broker connection's delivery type.
extension JobDecoder {
    /// Decodes a delivery. One the consumer drained unread (over `maxBytes`, so its body is
    /// empty) fails the size check with the size its content header declared.
    public func decode(_ delivery: AMQPDelivery) -> Result<(JobEnvelope, Job), JobValidationError> {
        decode(body: delivery.body, bodySize: delivery.bodySize, properties: delivery.properties)
    }
}
