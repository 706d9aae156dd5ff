import AMQP
import Foundation
import Synchronization
import Testing

extension BrokerTests {
    /// Restarts the shared broker: only `make test`'s disruptive phase runs it, alone
    /// (`HERALD_TEST_DISRUPTIVE=1`).
    @Suite(.serialized, .enabled(if: TestEnvironment.environment["HERALD_TEST_DISRUPTIVE"] == "1",
                                 "restarts the broker: `make test`'s disruptive phase only"))
    struct Disruptive {
        /// A broker restart: confirmed persistent messages on a durable queue survive, publishes
        /// waiting during the outage complete afterwards, the consumer resumes by itself.
        /// Set HERALD_TEST_SKIP_RESTART=1 to leave the shared broker alone.
        @Test func brokerRestartLosesNothingConfirmed() async throws {
            guard TestEnvironment.environment["HERALD_TEST_SKIP_RESTART"] == nil else { return }
            try await withConnection { connection in
                try await withQueue(connection, "durable", durable: true) { stored in
                    try await withQueue(connection, "live", durable: true) { live in
                        for i in 0..<200 {
                            try await connection.publish(body: "\(i)".bytes, exchange: "", routingKey: stored,
                                                         properties: AMQPProperties(messageID: "s-\(i)", persistent: true))
                        }
                        let seen = Mutex<Set<String>>([])
                        let consumer = connection.consume(queue: live, prefetch: 20)
                        let collector = Collector(consumer) { delivery in
                            seen.withLock { _ = $0.insert(delivery.properties.messageID ?? "") }
                            try? await delivery.ack()
                        }
                        _ = collector
                        let total = 300
                        let publishing = Task {
                            try await withThrowingTaskGroup(of: Void.self) { group in
                                for p in 0..<10 {
                                    group.addTask {
                                        for i in 0..<(total / 10) {
                                            try await connection.publish(body: "x".bytes, exchange: "", routingKey: live,
                                                                         properties: AMQPProperties(messageID: "l-\(p)-\(i)"))
                                            try await Task.sleep(for: .milliseconds(40))
                                        }
                                    }
                                }
                                try await group.waitForAll()
                            }
                        }
                        try await Task.sleep(for: .milliseconds(300))
                        try await TestEnvironment.services("restart-rabbitmq")
                        try await connection.waitUntilConnected(timeout: .seconds(15))
                        try await publishing.value
                        #expect(try await connection.queueState(stored)?.messageCount == 200)
                        let deadline = ContinuousClock.now + .seconds(15)
                        while seen.withLock({ $0.count }) < total && ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        #expect(seen.withLock { $0.count } == total)
                        await consumer.cancel()
                    }
                }
            }
        }
    }
}
