/// What a passive queue.declare reports about a queue.
public struct AMQPQueueState: Sendable, Equatable {
    /// Messages ready for delivery (not counting unacknowledged ones).
    public var messageCount: Int
    /// Active consumers.
    public var consumerCount: Int

    public init(messageCount: Int, consumerCount: Int) {
        self.messageCount = messageCount
        self.consumerCount = consumerCount
    }
}
