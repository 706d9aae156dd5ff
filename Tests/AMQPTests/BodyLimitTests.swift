import AMQP
import Foundation
import Testing

extension BrokerTests {
    /// `consume(maxBodyBytes:)`: a body its content header declares too large is drained, not kept.
    @Suite struct BodyLimit {
        @Test func bodiesOverTheLimitArriveEmptyMarkedOversizeAndTheOthersWhole() async throws {
            try await withConnection { connection in
                try await withQueue(connection, "body-limit") { queue in
                    let limit = 1_000
                    // At the limit, one over, many frames over (frame_max is 128 KiB), empty, then a small one.
                    let sizes = [limit, limit + 1, 300_000, 0, 10]
                    for (index, size) in sizes.enumerated() {
                        var properties = AMQPProperties()
                        properties.messageID = "m\(index)"
                        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
                        try await connection.publish(body: body, exchange: "", routingKey: queue, properties: properties)
                    }
                    let consumer = connection.consume(queue: queue, prefetch: 10, maxBodyBytes: limit)
                    let collector = Collector(consumer) { try? await $0.ack() }
                    #expect(await collector.wait(for: sizes.count, timeout: .seconds(10)) == sizes.count)
                    let deliveries = collector.deliveries
                    #expect(deliveries.map(\.properties.messageID) == sizes.indices.map { "m\($0)" })
                    for (index, (size, delivery)) in zip(sizes, deliveries).enumerated() {
                        #expect(delivery.bodySize == size, "m\(index)")
                        #expect(delivery.isOversize == (size > limit), "m\(index)")
                        let expected = size > limit ? [] : (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
                        #expect(delivery.body == expected, "m\(index): \(delivery.body.count) bytes")
                    }
                    await consumer.cancel()
                    await collector.finished()
                    #expect(try await connection.queueState(queue)?.messageCount == 0)
                }
            }
        }

        @Test func withoutALimitALargeBodyArrivesWhole() async throws {
            try await withConnection { connection in
                try await withQueue(connection, "no-body-limit") { queue in
                    let body = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                    try await connection.publish(body: body, exchange: "", routingKey: queue, properties: AMQPProperties())
                    let consumer = connection.consume(queue: queue, prefetch: 1)
                    let collector = Collector(consumer) { try? await $0.ack() }
                    #expect(await collector.wait(for: 1, timeout: .seconds(10)) == 1)
                    let delivery = try #require(collector.deliveries.first)
                    #expect(!delivery.isOversize)
                    #expect(delivery.bodySize == body.count)
                    #expect(delivery.body == body)
                    await consumer.cancel()
                    await collector.finished()
                }
            }
        }

        /// The local broker's `max_message_size` (scripts/services.sh, as in
        /// deploy/rabbitmq/rabbitmq.conf): 32 MiB. A larger publish never reaches a queue.
        @Test func theBrokerRefusesAPublishOverItsMaxMessageSize() async throws {
            try await withConnection { connection in
                try await withQueue(connection, "max-message-size") { queue in
                    let tooLarge = [UInt8](repeating: 0x78, count: 32 * 1_048_576 + 1)
                    await #expect(throws: AMQPError.self) {
                        try await connection.publish(body: tooLarge, exchange: "", routingKey: queue, properties: AMQPProperties())
                    }
                    // The publish channel comes back; a publish at the limit goes through.
                    let atLimit = [UInt8](repeating: 0x78, count: 32 * 1_048_576)
                    try await connection.publish(body: atLimit, exchange: "", routingKey: queue, properties: AMQPProperties())
                    #expect(try await connection.queueState(queue)?.messageCount == 1)
                }
            }
        }
    }
}
