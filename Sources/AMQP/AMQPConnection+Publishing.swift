extension AMQPConnection {
    /// Publishes on the confirm-mode channel and returns after the broker's confirm.
    ///
    /// At most `confirmWindow` messages are unconfirmed at once (further publishes wait);
    /// unconfirmed messages are re-published after a reconnect (so a consumer may see a
    /// duplicate — deduplicate by `messageID`). Throws `.publishNacked`, `.unroutable` (mandatory
    /// and no queue bound; matched by messageID, exchange and routing key), `.channelClosed`
    /// (e.g. no such exchange) or `.closed`. Cancelling the calling task does not withdraw it.
    public func publish(body: [UInt8], exchange: String, routingKey: String,
                        properties: AMQPProperties, mandatory: Bool = false) async throws(AMQPError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, AMQPError>, Never>) in
            let request = PublishRequest(body: body, exchange: exchange, routingKey: routingKey,
                                         properties: properties, mandatory: mandatory, continuation: continuation)
            if mailbox.post(.publish(request)) != nil {
                continuation.resume(returning: .failure(.closed))
            }
        }
        try result.get()
    }
}
