import AMQP
import Foundation
import Testing

extension BrokerTests {
    /// `publish(…, thenAck:)` and a consumer's screen moving a delivery: a delivery moved to
    /// another queue is acked by the connection once its copy is confirmed, and only then.
    @Suite struct PublishThenAck {
        /// `count` messages m0, m1, … on a fresh source queue, and a fresh target queue; afterwards
        /// nothing is left on the source (every original acked), as another connection sees it.
        private func withMoves(_ count: Int, _ body: (AMQPConnection, _ source: String, _ target: String) async throws -> Void) async throws {
            try await withConnection { connection in
                try await withQueue(connection, "from") { source in
                    try await withQueue(connection, "to") { target in
                        for i in 0..<count {
                            try await connection.publish(body: "m\(i)".bytes, exchange: "", routingKey: source,
                                                         properties: AMQPProperties(messageID: "m\(i)"))
                        }
                        try await body(connection, source, target)
                        let left = try await withConnection { other in try await other.queueState(source)?.messageCount }
                        #expect(left == 0)
                    }
                }
            }
        }

        @Test func movedDeliveriesAreAckedOnceTheirCopiesAreConfirmed() async throws {
            let count = 50
            try await withMoves(count) { connection, source, target in
                let consumer = connection.consume(queue: source, prefetch: 10)
                // Concurrently, as the runner settles: acks complete out of order too.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    var seen = 0
                    for await delivery in consumer {
                        group.addTask {
                            var properties = delivery.properties
                            properties.headers["x-moved"] = .bool(true)
                            try await connection.publish(body: delivery.body, exchange: "", routingKey: target,
                                                         properties: properties, thenAck: delivery)
                        }
                        seen += 1
                        if seen == count { break }
                    }
                    try await group.waitForAll()
                }
                await consumer.cancel()
                #expect(try await connection.queueState(target)?.messageCount == count)
                var bodies: Set<String> = []
                while let moved = try await connection.get(queue: target) {
                    #expect(moved.properties.headers["x-moved"] == .bool(true))
                    bodies.insert(String(decoding: moved.body, as: UTF8.self))
                    try await moved.ack()
                }
                #expect(bodies == Set((0..<count).map { "m\($0)" }))
            }
        }

        @Test func aPublishThatFailsLeavesTheDeliveryUnacked() async throws {
            try await withConnection { connection in
                try await withQueue(connection, "kept") { source in
                    try await connection.publish(body: "keep".bytes, exchange: "", routingKey: source, properties: AMQPProperties())
                    let delivery = try #require(try await connection.get(queue: source))
                    // No such exchange: the broker closes the publish channel; nothing is acked.
                    await #expect(throws: AMQPError.self) {
                        try await connection.publish(body: delivery.body, exchange: TestEnvironment.unique("missing"), routingKey: "k",
                                                     properties: AMQPProperties(), thenAck: delivery)
                    }
                    try await delivery.nack(requeue: true)
                    let again = try #require(try await connection.get(queue: source))
                    #expect(again.redelivered)
                    #expect(again.body == "keep".bytes)
                    try await again.ack()
                }
            }
        }

        /// A screen moves every other delivery where the connection reads it and hands the rest
        /// to the sequence: each move's completion is called once, on success only after the copy
        /// is confirmed and the original acked; the sequence sees only what the screen let through.
        /// (A completion never called would leave it waiting: the time limit ends it.)
        @Test(.timeLimit(.minutes(1))) func aScreenMovesSomeDeliveriesAndHandsOnTheRest() async throws {
            let count = 50
            try await withMoves(count) { connection, source, target in
                let (results, heard) = AsyncStream.makeStream(of: Result<Void, AMQPError>.self)
                let consumer = connection.consume(queue: source, prefetch: 10) { delivery -> AMQPScreening<(AMQPDelivery, String)> in
                    let body = String(decoding: delivery.body, as: UTF8.self)
                    guard let n = Int(body.dropFirst()), n.isMultiple(of: 2) else { return .deliver((delivery, body)) }
                    return .move(AMQPMove(body: delivery.body, exchange: "", routingKey: target, properties: delivery.properties) { heard.yield($0) })
                }
                var handedOn: Set<String> = []
                for await (delivery, body) in consumer {
                    handedOn.insert(body)
                    try await delivery.ack()
                    if handedOn.count == count / 2 { break }
                }
                var succeeded = 0
                for await result in results {
                    if case .success = result { succeeded += 1 } else { Issue.record("a move failed: \(result)") }
                    if succeeded == count / 2 { break }
                }
                await consumer.cancel()
                #expect(handedOn == Set(stride(from: 1, to: count, by: 2).map { "m\($0)" }))
                var moved: Set<String> = []
                while let copy = try await connection.get(queue: target) {
                    moved.insert(String(decoding: copy.body, as: UTF8.self))
                    try await copy.ack()
                }
                #expect(moved == Set(stride(from: 0, to: count, by: 2).map { "m\($0)" }))
            }
        }

        /// A move whose copy cannot be published (no such exchange) is heard as a failure and
        /// leaves its delivery unacked, to be settled by whoever screened it.
        @Test(.timeLimit(.minutes(1))) func aFailedMoveIsHeardAndLeavesTheDeliveryUnacked() async throws {
            try await withConnection { connection in
                try await withQueue(connection, "kept") { source in
                    try await connection.publish(body: "keep".bytes, exchange: "", routingKey: source, properties: AMQPProperties())
                    let (failures, heard) = AsyncStream.makeStream(of: (AMQPDelivery, Result<Void, AMQPError>).self)
                    let missing = TestEnvironment.unique("missing")
                    let consumer = connection.consume(queue: source, prefetch: 1) { delivery -> AMQPScreening<AMQPDelivery> in
                        guard !delivery.redelivered else { return .deliver(delivery) }
                        return .move(AMQPMove(body: delivery.body, exchange: missing, routingKey: "k", properties: AMQPProperties()) {
                            heard.yield((delivery, $0))
                        })
                    }
                    var failed: (AMQPDelivery, Result<Void, AMQPError>)?
                    for await failure in failures {
                        failed = failure
                        break
                    }
                    let (delivery, result) = try #require(failed)
                    #expect(throws: AMQPError.self) { try result.get() }
                    try await delivery.nack(requeue: true)
                    var again: AMQPDelivery?
                    for await redelivered in consumer {
                        again = redelivered
                        break
                    }
                    let redelivered = try #require(again)
                    #expect(redelivered.redelivered)
                    #expect(redelivered.body == "keep".bytes)
                    try await redelivered.ack()
                    await consumer.cancel()
                }
            }
        }

        /// A delivery of another connection is acked through its own connection after the confirm.
        @Test func aDeliveryOfAnotherConnectionIsAckedThroughItsOwn() async throws {
            try await withConnection { connection in
                try await withConnection { publisher in
                    try await withQueue(connection, "from") { source in
                        try await withQueue(connection, "to") { target in
                            try await connection.publish(body: "x".bytes, exchange: "", routingKey: source, properties: AMQPProperties())
                            let delivery = try #require(try await connection.get(queue: source))
                            try await publisher.publish(body: delivery.body, exchange: "", routingKey: target, properties: AMQPProperties(),
                                                        thenAck: delivery)
                            #expect(try await connection.queueState(target)?.messageCount == 1)
                            let left = try await withConnection { other in try await other.queueState(source)?.messageCount }
                            #expect(left == 0)
                            }
                    }
                }
            }
        }
    }
}
