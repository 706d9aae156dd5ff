/// A message handed to a consumer or returned by `AMQPConnection.get(queue:)`.
///
/// Settle it exactly once with `ack()`, `nack(requeue:)` or `reject(requeue:)`. Settling
/// after the connection (or channel) it came on is gone throws `.staleDelivery`: the broker
/// has already put the message back and will deliver it again. Settling twice is a no-op.
///
/// A delivery to a consumer with `maxBodyBytes` whose content header declared a larger body
/// comes with `isOversize` set and an empty `body`: its frames were drained, never kept.
public struct AMQPDelivery: Sendable {
    /// The body; empty when `isOversize`.
    public var body: [UInt8]
    /// The body size the content header declared (equals `body.count` unless `isOversize`).
    public var bodySize: Int
    /// The body was over the consumer's `maxBodyBytes` and was dropped unread.
    public var isOversize: Bool
    public var properties: AMQPProperties
    public var exchange: String
    public var routingKey: String
    public var redelivered: Bool
    public var deliveryTag: UInt64

    let mailbox: Mailbox
    let channel: UInt16
    let generation: UInt64

    init(body: [UInt8], bodySize: Int, properties: AMQPProperties, exchange: String, routingKey: String, redelivered: Bool,
         deliveryTag: UInt64, mailbox: Mailbox, channel: UInt16, generation: UInt64) {
        self.body = body
        self.bodySize = bodySize
        self.isOversize = bodySize > body.count
        self.properties = properties
        self.exchange = exchange
        self.routingKey = routingKey
        self.redelivered = redelivered
        self.deliveryTag = deliveryTag
        self.mailbox = mailbox
        self.channel = channel
        self.generation = generation
    }

    /// Acknowledges the message (it leaves the queue).
    public func ack() async throws(AMQPError) {
        try await settle(.ack)
    }

    /// Negatively acknowledges; `requeue: false` dead-letters (or drops) the message.
    public func nack(requeue: Bool) async throws(AMQPError) {
        try await settle(.nack(requeue: requeue))
    }

    /// Rejects the message; `requeue: false` dead-letters (or drops) it.
    public func reject(requeue: Bool) async throws(AMQPError) {
        try await settle(.reject(requeue: requeue))
    }

    private func settle(_ kind: SettleRequest.Kind) async throws(AMQPError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, AMQPError>, Never>) in
            settle(kind, Completion(continuation))
        }
        try result.get()
    }

    /// Posts the settle; `completion` hears the result (`.closed` at once if the connection is gone).
    func settle(_ kind: SettleRequest.Kind, _ completion: Completion) {
        let request = SettleRequest(channel: channel, generation: generation, deliveryTag: deliveryTag, kind: kind, continuation: completion)
        if mailbox.post(.settle(request)) != nil {
            completion.resume(returning: .failure(.closed))
        }
    }
}
