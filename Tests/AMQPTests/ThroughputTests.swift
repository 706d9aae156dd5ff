import AMQP
import Foundation
import Synchronization
import Testing

extension BrokerTests {
    @Suite struct Throughput {
        static let publishers = 50
        static let perPublisher = 200  // 10,000 messages

        /// 10,000 confirmed publishes consumed with manual acks: none lost, none duplicated,
        /// each publisher's messages in order.
        @Test func tenThousandConfirmedPublishesConsumedWithManualAcks() async throws {
            let total = Self.publishers * Self.perPublisher
            try await withConnection(name: TestEnvironment.unique("consumer")) { consumerConnection in
                try await withQueue(consumerConnection, "bulk", durable: true) { queue in
                    let state = Mutex<(count: Int, last: [Int: Int], disorder: Int, duplicates: Int)>((0, [:], 0, 0))
                    let consumer = consumerConnection.consume(queue: queue, prefetch: 500)
                    let consuming = Task {
                        for await delivery in consumer {
                            guard case .int(let publisher)? = delivery.properties.headers["publisher"],
                                  case .int(let seq)? = delivery.properties.headers["seq"] else { continue }
                            let finished = state.withLock { state -> Bool in
                                let previous = state.last[Int(publisher)] ?? -1
                                if Int(seq) <= previous {
                                    if Int(seq) == previous || delivery.redelivered { state.duplicates += 1 } else { state.disorder += 1 }
                                } else {
                                    if Int(seq) != previous + 1 { state.disorder += 1 }
                                    state.last[Int(publisher)] = Int(seq)
                                    state.count += 1
                                }
                                return state.count >= total
                            }
                            try? await delivery.ack()
                            if finished { break }
                        }
                    }
                    let start = ContinuousClock.now
                    try await withConnection(name: TestEnvironment.unique("publisher")) { publisher in
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            for p in 0..<Self.publishers {
                                group.addTask {
                                    for seq in 0..<Self.perPublisher {
                                        let properties = AMQPProperties(
                                            contentType: "application/json", messageID: "\(p)-\(seq)",
                                            headers: ["publisher": .int(Int64(p)), "seq": .int(Int64(seq))],
                                            persistent: TestEnvironment.environment["HERALD_TEST_TRANSIENT"] == nil)
                                        try await publisher.publish(body: Array(#"{"version":1,"n":\#(seq)}"#.utf8),
                                                                    exchange: "", routingKey: queue, properties: properties)
                                    }
                                }
                            }
                            try await group.waitForAll()
                        }
                    }
                    let published = ContinuousClock.now
                    let deadline = ContinuousClock.now + .seconds(30)
                    while state.withLock({ $0.count }) < total && ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    let end = ContinuousClock.now
                    consuming.cancel()
                    let result = state.withLock { $0 }
                    #expect(result.count == total)
                    #expect(result.disorder == 0)
                    #expect(result.duplicates == 0)
                    let seconds = Double((end - start).components.attoseconds) / 1e18 + Double((end - start).components.seconds)
                    let publishSeconds = Double((published - start).components.attoseconds) / 1e18 + Double((published - start).components.seconds)
                    let kind = TestEnvironment.environment["HERALD_TEST_TRANSIENT"] == nil ? "persistent" : "transient"
                    print("AMQP throughput: \(total) messages published (confirmed, \(kind), durable queue) in \(String(format: "%.2f", publishSeconds)) s and consumed+acked in \(String(format: "%.2f", seconds)) s = \(Int(Double(total) / seconds)) msg/s end to end")
                    // Everything was acked: nothing left (ready or unacked is checked via count 0 + no redelivery).
                    try await Task.sleep(for: .milliseconds(200))
                    #expect(try await consumerConnection.queueState(queue)?.messageCount == 0)
                }
            }
        }
    }
}
