import AMQP
import Foundation
import HeraldRuntime
import Logging
import NIOConcurrencyHelpers

/// The floors of the poison scenario: what draining the malformed messages costs on this
/// machine with no Herald at all. Bare consumers of our AMQP module, as many per kind as the
/// fleet has workers, each on its own connection with the workers' prefetch and body limit,
/// settle every delivery one way, concurrently up to the prefetch, and do nothing else. Timed
/// by ``DeadLetterClock``, exactly as Herald's workers are.
struct PoisonFloor {
    /// How a bare consumer settles a delivery.
    enum Mode: String, Sendable {
        /// Nack without requeue: the work queue's dead-letter exchange takes it. The issue's
        /// floor. AMQP 0-9-1 has no way to attach a reason to a rejection, and a quorum queue
        /// dead-letters at most once (a broker failure mid-move loses the message).
        case reject
        /// The least a consumer must do to dead-letter with a reason and lose nothing: publish
        /// a persistent copy with an `x-herald-reason` header to the dead-letter exchange,
        /// await the broker's confirm, then ack. No decoding, logging, metrics or ledger.
        case republish
    }

    let broker: BrokerConfiguration
    let topology: HeraldTopology
    let maxBodyBytes: Int
    let mode: Mode
    let logger: Logger

    /// Consumes `expected` messages from the kinds' work queues (one consumer per entry of
    /// `consumers`), timed by `clock`.
    func drain(expected: Int, consumers kinds: [JobKind], timeout: Duration, clock: DeadLetterClock) async throws -> DeadLetterClock.Measurement {
        let settledCount = NIOLockedValueBox(0)
        var connections: [AMQPConnection] = []
        let outcome: Result<DeadLetterClock.Measurement, any Error>
        do {
            for (index, _) in kinds.enumerated() {
                let connection = AMQPConnection(configuration: try broker.connectionConfiguration(name: "herald-chaos-floor-\(index)"), logger: logger)
                connection.start()
                connections.append(connection)
            }
            for connection in connections { try await connection.waitUntilConnected(timeout: .seconds(10)) }
            outcome = .success(try await withThrowingTaskGroup(of: Void.self) { group -> DeadLetterClock.Measurement in
                for (kind, connection) in zip(kinds, connections) {
                    let consumer = connection.consume(queue: topology.workQueue(kind), prefetch: UInt16(clamping: broker.prefetch), maxBodyBytes: maxBodyBytes)
                    // Each delivery settled in its own task, as the workers run theirs: the
                    // prefetch, not a confirm's round trip, bounds how many are under way.
                    group.addTask {
                        try await withThrowingDiscardingTaskGroup { deliveries in
                            for await delivery in consumer {
                                deliveries.addTask {
                                    try await settle(delivery, kind: kind, on: connection)
                                    settledCount.withLockedValue { $0 += 1 }
                                }
                            }
                        }
                    }
                }
                let measurement = try await clock.measure(expected: expected, consumers: kinds, timeout: timeout)
                // A re-published copy arrives before its original's ack: wait for the acks, so
                // cancelling (which requeues what is unsettled) leaves nothing behind.
                let deadline = ContinuousClock.now + .seconds(30)
                while settledCount.withLockedValue({ $0 }) < expected, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                // Cancelling ends the consumers.
                group.cancelAll()
                return measurement
            })
        } catch {
            outcome = .failure(error)
        }
        for connection in connections { await connection.close() }
        do {
            return try outcome.get()
        } catch {
            throw ChaosFailure("the bare consumers (\(mode.rawValue)) settled \(settledCount.withLockedValue { $0 }) of \(expected) malformed messages: \(error)")
        }
    }

    private func settle(_ delivery: AMQPDelivery, kind: JobKind, on connection: AMQPConnection) async throws {
        switch mode {
        case .reject:
            try await delivery.nack(requeue: false)
        case .republish:
            var properties = delivery.properties
            properties.persistent = true
            properties.headers["x-herald-reason"] = .string("malformed")
            try await connection.publish(body: delivery.body, exchange: topology.deadLetterExchange, routingKey: kind.rawValue, properties: properties)
            try await delivery.ack()
        }
    }
}
