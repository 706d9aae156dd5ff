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
                                         properties: properties, mandatory: mandatory, continuation: Completion(continuation))
            if mailbox.post(.publish(request)) != nil {
                continuation.resume(returning: .failure(.closed))
            }
        }
        try result.get()
    }

    /// Publishes like ``publish(body:exchange:routingKey:properties:mandatory:)``, then acks
    /// `delivery` once the broker has confirmed the publish: a message moved (to a delay queue,
    /// to the dead-letter exchange with a reason) in one round through the connection thread
    /// instead of two, and never acked before its copy is safe.
    ///
    /// Throws if the publish failed (the delivery is not acked: settle it) or the ack did
    /// (`.staleDelivery`, `.closed`: the broker delivers it again, and the copy is there twice).
    /// A delivery from another connection is acked through that one after the confirm.
    public func publish(body: [UInt8], exchange: String, routingKey: String,
                        properties: AMQPProperties, thenAck delivery: AMQPDelivery) async throws(AMQPError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, AMQPError>, Never>) in
            move(body: body, exchange: exchange, routingKey: routingKey, properties: properties, thenAck: delivery, Completion(continuation))
        }
        try result.get()
    }

    /// The copy, and the ack of `delivery` after its confirm, posted to the connection thread,
    /// which reports to `completion`. (A consumer's screen moves a delivery without the post:
    /// ``AMQPScreening/move(_:)``.)
    private func move(body: [UInt8], exchange: String, routingKey: String, properties: AMQPProperties, thenAck delivery: AMQPDelivery,
                      _ completion: Completion) {
        guard delivery.mailbox === mailbox else {
            // Acked through the delivery's own connection once this one has confirmed.
            let copy = PublishRequest(body: body, exchange: exchange, routingKey: routingKey, properties: properties, mandatory: false,
                                      continuation: Completion { result in
                                          guard case .success = result else { return completion.resume(returning: result) }
                                          delivery.settle(.ack, completion)
                                      })
            if mailbox.post(.publish(copy)) != nil { completion.resume(returning: .failure(.closed)) }
            return
        }
        let target = SettleTarget(of: delivery)
        let request = PublishRequest(body: body, exchange: exchange, routingKey: routingKey, properties: properties,
                                     mandatory: false, thenAck: target, continuation: completion)
        if mailbox.post(.publish(request)) != nil { completion.resume(returning: .failure(.closed)) }
    }
}
