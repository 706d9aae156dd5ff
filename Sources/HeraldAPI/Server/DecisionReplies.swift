import AMQP
import HeraldRuntime
import Logging
import ServiceLifecycle
import Synchronization

/// herald-api's replies queue: the workers answer a start's job with their decision there
/// (``JobDecision``, correlated by the job's message id), and the request waiting for it is
/// answered. One queue per process (`<namespace>.replies.<random>`), declared again on every
/// reconnect: not exclusive (the broker may still hold the old connection when the new one
/// declares it), deleted by the broker once unused for a minute (`x-expires`). A reply nobody
/// waits for any more (its wait ran out) is dropped.
final class DecisionReplies: Service, Sendable {
    let queue: String
    private let connection: AMQPConnection
    private let logger: Logger
    private let waiting = Mutex<[String: [Waiter]]>([:])

    init(connection: AMQPConnection, queue: String, logger: Logger) {
        self.connection = connection
        self.queue = queue
        self.logger = logger
    }

    /// The queue's declaration, for the connection's topology.
    static func topology(queue: String) -> AMQPTopology {
        AMQPTopology(queues: [.init(name: queue, durable: false, arguments: ["x-expires": .int(60_000)])])
    }

    /// Consumes the queue until shutdown; again, after a second, whenever the broker ends the
    /// subscription (meanwhile a start's wait runs out: 202).
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let consumer = self.connection.consume(queue: self.queue, prefetch: 512, maxBodyBytes: 4096)
                await withTaskCancellationHandler {
                    for await delivery in consumer {
                        if let id = delivery.properties.correlationID, let decision = JobDecision.decode(delivery.body) {
                            self.resolve(id, decision)
                        }
                        try? await delivery.ack()
                    }
                } onCancel: {
                    Task { await consumer.cancel() }
                }
                if !Task.isCancelled {
                    self.logger.warning("the replies queue's subscription ended; subscribing again", metadata: ["queue": "\(self.queue)"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    /// Waits for the decision on message `id` from now on: register before the job can be
    /// published, then ``Waiter/decision(within:)`` once it is.
    func expect(_ id: String) -> Waiter {
        let waiter = Waiter(id: id, owner: self)
        waiting.withLock { $0[id, default: []].append(waiter) }
        return waiter
    }

    private func resolve(_ id: String, _ decision: JobDecision) {
        let waiters = waiting.withLock { $0.removeValue(forKey: id) } ?? []
        for waiter in waiters { waiter.settle(decision) }
    }

    fileprivate func forget(_ waiter: Waiter) {
        waiting.withLock { table in
            table[waiter.id]?.removeAll { $0 === waiter }
            if table[waiter.id]?.isEmpty == true { table[waiter.id] = nil }
        }
    }

    /// One request's wait for one job's decision.
    final class Waiter: Sendable {
        let id: String
        private let owner: DecisionReplies
        private let state = Mutex<State>(.empty)

        private enum State {
            case empty
            case waiting(CheckedContinuation<JobDecision?, Never>)
            case done(JobDecision?)
        }

        fileprivate init(id: String, owner: DecisionReplies) {
            self.id = id
            self.owner = owner
        }

        /// The decision, or nil when none came within `timeout` (or the wait was given up).
        func decision(within timeout: Duration) async -> JobDecision? {
            // One entry on the process's deadline thread, not a sleeping task per request.
            let deadline = DeadlineClock.shared.schedule(after: timeout) { [weak self] in self?.settle(nil) }
            defer {
                DeadlineClock.shared.cancel(deadline)
                owner.forget(self)
            }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now: JobDecision?? = state.withLock { state in
                        switch state {
                        case .done(let decision): return .some(decision)
                        case .empty, .waiting:
                            state = .waiting(continuation)
                            return nil
                        }
                    }
                    if let now { continuation.resume(returning: now) }
                }
            } onCancel: {
                settle(nil)
            }
        }

        /// Gives up the wait (the start was not recorded).
        func cancel() {
            settle(nil)
            owner.forget(self)
        }

        fileprivate func settle(_ decision: JobDecision?) {
            let continuation: CheckedContinuation<JobDecision?, Never>? = state.withLock { state in
                switch state {
                case .done: return nil
                case .empty:
                    state = .done(decision)
                    return nil
                case .waiting(let continuation):
                    state = .done(decision)
                    return continuation
                }
            }
            continuation?.resume(returning: decision)
        }
    }
}
