import AMQP
import Foundation
import HeraldRuntime
import Logging
import NIOConcurrencyHelpers

/// The floor of the poison scenario: what draining the malformed messages costs on this
/// machine with no Herald at all. Bare consumers of our AMQP module, as many per kind as the
/// fleet has workers, each on its own connection with the workers' prefetch and body limit,
/// reject every delivery (nack without requeue: the work queue's dead-letter exchange takes
/// it) and do nothing else. Timed like the workers: from the first delivery to the last
/// rejection, the backlog published beforehand.
struct PoisonFloor {
    let broker: BrokerConfiguration
    let topology: HeraldTopology
    let maxBodyBytes: Int
    let logger: Logger

    /// Consumes `expected` messages from the kinds' work queues (one consumer per entry of
    /// `consumers`); returns the seconds from the first delivery to the last rejection.
    func drain(expected: Int, consumers kinds: [JobKind], timeout: Duration) async throws -> Double {
        let clock = ContinuousClock()
        let state = NIOLockedValueBox((rejected: 0, first: ContinuousClock.Instant?.none, last: ContinuousClock.Instant?.none))
        var connections: [AMQPConnection] = []
        let outcome: Result<Bool, any Error>
        do {
            for (index, _) in kinds.enumerated() {
                let connection = AMQPConnection(configuration: try broker.connectionConfiguration(name: "herald-chaos-floor-\(index)"), logger: logger)
                connection.start()
                connections.append(connection)
            }
            for connection in connections { try await connection.waitUntilConnected(timeout: .seconds(10)) }
            outcome = .success(try await withThrowingTaskGroup(of: Void.self) { group -> Bool in
                for (kind, connection) in zip(kinds, connections) {
                    let consumer = connection.consume(queue: topology.workQueue(kind), prefetch: UInt16(clamping: broker.prefetch), maxBodyBytes: maxBodyBytes)
                    group.addTask {
                        for await delivery in consumer {
                            let received = clock.now
                            state.withLockedValue { if $0.first == nil { $0.first = received } }
                            try await delivery.nack(requeue: false)
                            let rejected = clock.now
                            state.withLockedValue {
                                $0.rejected += 1
                                $0.last = rejected
                            }
                        }
                    }
                }
                // Ends when every message is rejected (or at the timeout): cancelling ends the consumers.
                let deadline = clock.now + timeout
                while clock.now < deadline, state.withLockedValue({ $0.rejected }) < expected {
                    try await Task.sleep(for: .milliseconds(20))
                }
                group.cancelAll()
                return state.withLockedValue { $0.rejected } >= expected
            })
        } catch {
            outcome = .failure(error)
        }
        for connection in connections { await connection.close() }
        let (rejected, first, last) = state.withLockedValue { ($0.rejected, $0.first, $0.last) }
        guard try outcome.get(), let first, let last else {
            throw ChaosFailure("the bare consumers rejected \(rejected) of \(expected) malformed messages within \(timeout)")
        }
        return (last - first).seconds
    }
}
