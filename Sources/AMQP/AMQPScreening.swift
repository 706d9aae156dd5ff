/// What a consumer's screen makes of a delivery, on the connection thread as the delivery
/// is read (``AMQPConnection/consume(queue:prefetch:maxBodyBytes:screen:)``).
public enum AMQPScreening<Element: Sendable>: Sendable {
    /// Handed to the consumer's sequence.
    case deliver(Element)
    /// Settled where it was read: the copy is published and the delivery acked once the
    /// broker confirms it, without the delivery leaving the connection thread.
    case move(AMQPMove)
}

/// A copy to publish in place of a delivery, which is acked once the copy is confirmed.
///
/// `completion` is called on the connection thread (quick, never blocking): `.success` once
/// the copy is confirmed and the delivery acked, a failure when the copy could not be
/// published (the delivery is then not acked: settle it) or the ack failed (the broker
/// delivers it again, and the copy is there twice).
public struct AMQPMove: Sendable {
    public var body: [UInt8]
    public var exchange: String
    public var routingKey: String
    public var properties: AMQPProperties
    public var completion: @Sendable (Result<Void, AMQPError>) -> Void

    public init(body: [UInt8], exchange: String, routingKey: String, properties: AMQPProperties,
                completion: @escaping @Sendable (Result<Void, AMQPError>) -> Void) {
        self.body = body
        self.exchange = exchange
        self.routingKey = routingKey
        self.properties = properties
        self.completion = completion
    }
}

/// The connection thread's side of a consumer's sequence: the screen, then the stream.
struct ConsumerSink: Sendable {
    enum Offer {
        case handedOut
        /// The sequence has ended: the delivery goes back to the broker.
        case terminated
        case move(AMQPMove)
    }

    let offer: @Sendable (AMQPDelivery) -> Offer
    let finish: @Sendable () -> Void

    init<Element: Sendable>(_ continuation: AsyncStream<Element>.Continuation,
                            screen: @escaping @Sendable (AMQPDelivery) -> AMQPScreening<Element>) {
        offer = { delivery in
            switch screen(delivery) {
            case .deliver(let element):
                if case .terminated = continuation.yield(element) { return .terminated }
                return .handedOut
            case .move(let move):
                return .move(move)
            }
        }
        finish = { continuation.finish() }
    }
}
