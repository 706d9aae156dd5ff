extension AMQPConnection {
    /// Declares exchanges, then queues, then bindings (idempotent). A mismatch with an existing
    /// declaration throws `.channelClosed(code: 406, …)`.
    public func declare(_ topology: AMQPTopology) async throws(AMQPError) {
        _ = try await admin(Self.steps(for: topology))
    }

    /// Passive queue.declare: message and consumer counts, or nil when the queue does not exist.
    public func queueState(_ queue: String) async throws(AMQPError) -> AMQPQueueState? {
        guard case .queueState(let state) = try await admin([.passiveDeclareQueue(queue)]) else { return nil }
        return state
    }

    /// basic.get with manual ack; nil when the queue is empty.
    public func get(queue: String) async throws(AMQPError) -> AMQPDelivery? {
        guard case .delivery(let delivery) = try await admin([.get(queue)]) else { return nil }
        return delivery
    }

    /// Purges the queue; returns how many messages were removed.
    public func purge(queue: String) async throws(AMQPError) -> Int {
        guard case .count(let count) = try await admin([.purge(queue)]) else { return 0 }
        return count
    }

    /// Deletes the queue (no error when it does not exist).
    public func deleteQueue(_ name: String) async throws(AMQPError) {
        _ = try await admin([.deleteQueue(name)])
    }

    /// Deletes the exchange (no error when it does not exist).
    public func deleteExchange(_ name: String) async throws(AMQPError) {
        _ = try await admin([.deleteExchange(name)])
    }

    static func steps(for topology: AMQPTopology) -> [AdminStep] {
        topology.exchanges.map { AdminStep.declareExchange($0) }
            + topology.queues.map { AdminStep.declareQueue($0) }
            + topology.bindings.map { AdminStep.bind($0) }
    }

    private func admin(_ steps: [AdminStep]) async throws(AMQPError) -> AdminResult {
        if steps.isEmpty { return .done }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<AdminResult, AMQPError>, Never>) in
            if mailbox.post(.admin(AdminRequest(steps: steps, continuation: continuation))) != nil {
                continuation.resume(returning: .failure(.closed))
            }
        }
        return try result.get()
    }
}
