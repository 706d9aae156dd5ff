import AMQP
import Foundation
import Testing

extension BrokerTests {
    @Suite struct Messaging {
        @Test func everyFieldValueRoundTripsThroughHeaders() async throws {
            try await withConnection { connection in
                try await withQueue(connection, "fields") { queue in
                    let when = Date(timeIntervalSince1970: 1_700_000_123)
                    let headers: AMQPTable = [
                        "bool": .bool(true),
                        "false": .bool(false),
                        "int": .int(-9_007_199_254_740_993),
                        "max": .int(Int64.max),
                        "double": .double(3.25),
                        "string": .string("grüße ✓"),
                        "empty": .string(""),
                        "bytes": .bytes([0, 1, 2, 254, 255]),
                        "timestamp": .timestamp(when),
                        "array": .array([.int(1), .string("two"), .array([.bool(false)]), .table(["k": .void])]),
                        "table": .table(["nested": .table(["deep": .double(-0.5)]), "n": .int(7)]),
                        "void": .void,
                    ]
                    let properties = AMQPProperties(
                        contentType: "application/json", contentEncoding: "identity", correlationID: "corr-1",
                        replyTo: "reply.queue", expiration: "60000", messageID: "msg-1", type: "sms.verification.v1",
                        userID: "guest", appID: "herald-tests", headers: headers, persistent: false, priority: 3,
                        timestamp: when)
                    try await connection.publish(body: "{}".bytes, exchange: "", routingKey: queue, properties: properties)
                    let delivery = try #require(try await connection.get(queue: queue))
                    #expect(delivery.body == "{}".bytes)
                    #expect(delivery.routingKey == queue)
                    #expect(delivery.exchange == "")
                    #expect(delivery.redelivered == false)
                    #expect(delivery.properties.headers == headers)
                    #expect(delivery.properties == properties)
                    try await delivery.ack()
                    #expect(try await connection.get(queue: queue) == nil)
                }
            }
        }

        @Test func topologyDeclareStatePurgeDelete() async throws {
            try await withConnection { connection in
                let exchange = TestEnvironment.unique("topic")
                let queue = TestEnvironment.unique("topo")
                let topology = AMQPTopology(
                    exchanges: [.init(name: exchange, type: "topic", durable: false, autoDelete: false)],
                    queues: [.init(name: queue, durable: true, arguments: ["x-max-length": .int(1000)])],
                    bindings: [.init(queue: queue, exchange: exchange, routingKey: "sms.*")])
                try await connection.declare(topology)
                try await connection.declare(topology)  // idempotent
                for i in 0..<3 {
                    try await connection.publish(body: "m\(i)".bytes, exchange: exchange, routingKey: "sms.verification",
                                                 properties: AMQPProperties())
                }
                try await connection.publish(body: "x".bytes, exchange: exchange, routingKey: "email.action",
                                             properties: AMQPProperties())
                #expect(try await connection.queueState(queue) == AMQPQueueState(messageCount: 3, consumerCount: 0))
                #expect(try await connection.purge(queue: queue) == 3)
                #expect(try await connection.queueState(queue)?.messageCount == 0)

                // Mismatched arguments: 406 on the admin channel only; it is reopened.
                await #expect(throws: AMQPError.self) {
                    try await connection.declare(AMQPTopology(queues: [.init(name: queue, durable: false)]))
                }
                let mismatch = await amqpError { () async throws(AMQPError) in
                    try await connection.declare(AMQPTopology(queues: [.init(name: queue, durable: false)]))
                }
                guard case .channelClosed(let code, _)? = mismatch else {
                    Issue.record("expected channelClosed, got \(String(describing: mismatch))")
                    return
                }
                #expect(code == 406)
                #expect(try await connection.queueState(queue) != nil)

                try await connection.deleteQueue(queue)
                #expect(try await connection.queueState(queue) == nil)
                try await connection.deleteExchange(exchange)
                try await connection.deleteQueue(queue)  // no such queue: still fine
                #expect(connection.isConnected)
            }
        }

        @Test func mandatoryPublishToAnUnboundKeyThrowsUnroutable() async throws {
            try await withConnection { connection in
                let exchange = TestEnvironment.unique("direct")
                try await connection.declare(AMQPTopology(exchanges: [.init(name: exchange, type: "direct", durable: false)]))
                defer { Task { try? await connection.deleteExchange(exchange) } }
                let error = await amqpError { () async throws(AMQPError) in
                    try await connection.publish(body: "lost".bytes, exchange: exchange, routingKey: "nobody",
                                                 properties: AMQPProperties(messageID: "m-1"), mandatory: true)
                }
                guard case .unroutable(let code, let text)? = error else {
                    Issue.record("expected unroutable, got \(String(describing: error))")
                    return
                }
                #expect(code == 312)
                #expect(text.contains("NO_ROUTE"))
                // Not mandatory: confirmed (and dropped by the broker).
                try await connection.publish(body: "dropped".bytes, exchange: exchange, routingKey: "nobody",
                                             properties: AMQPProperties(messageID: "m-2"))
                // Mandatory and routable: fine.
                try await withQueue(connection, "routed") { queue in
                    try await connection.declare(AMQPTopology(bindings: [.init(queue: queue, exchange: exchange, routingKey: "k")]))
                    try await connection.publish(body: "ok".bytes, exchange: exchange, routingKey: "k",
                                                 properties: AMQPProperties(messageID: "m-3"), mandatory: true)
                    #expect(try await connection.queueState(queue)?.messageCount == 1)
                }
                // Publishing to a missing exchange closes only the publish channel.
                await #expect(throws: AMQPError.self) {
                    try await connection.publish(body: "x".bytes, exchange: TestEnvironment.unique("missing"),
                                                 routingKey: "k", properties: AMQPProperties())
                }
                try await connection.publish(body: "after".bytes, exchange: exchange, routingKey: "nobody",
                                             properties: AMQPProperties())
            }
        }

        @Test func nackWithRequeueRedelivers() async throws {
            try await withConnection { connection in
                try await withQueue(connection, "nack") { queue in
                    try await connection.publish(body: "again".bytes, exchange: "", routingKey: queue, properties: AMQPProperties())
                    let consumer = connection.consume(queue: queue, prefetch: 10)
                    let collector = Collector(consumer) { delivery in
                        if !delivery.redelivered {
                            try? await delivery.nack(requeue: true)
                        } else {
                            try? await delivery.ack()
                        }
                    }
                    #expect(await collector.wait(for: 2, timeout: .seconds(5)) == 2)
                    let deliveries = collector.deliveries
                    #expect(deliveries.map(\.redelivered) == [false, true])
                    #expect(deliveries.allSatisfy { $0.body == "again".bytes })
                    await consumer.cancel()
                    await collector.finished()
                    #expect(try await connection.queueState(queue)?.messageCount == 0)
                }
            }
        }

        @Test func rejectWithoutRequeueDeadLetters() async throws {
            try await withConnection { connection in
                let dlx = TestEnvironment.unique("dlx")
                try await connection.declare(AMQPTopology(exchanges: [.init(name: dlx, type: "fanout", durable: false)]))
                try await withQueue(connection, "dead") { deadQueue in
                    try await connection.declare(AMQPTopology(bindings: [.init(queue: deadQueue, exchange: dlx, routingKey: "")]))
                    try await withQueue(connection, "work", arguments: ["x-dead-letter-exchange": .string(dlx)]) { queue in
                        try await connection.publish(body: "bad input".bytes, exchange: "", routingKey: queue,
                                                     properties: AMQPProperties(messageID: "dl-1"))
                        let delivery = try #require(try await connection.get(queue: queue))
                        try await delivery.reject(requeue: false)
                        var dead: AMQPDelivery?
                        for _ in 0..<100 where dead == nil {
                            dead = try await connection.get(queue: deadQueue)
                            if dead == nil { try await Task.sleep(for: .milliseconds(20)) }
                        }
                        let letter = try #require(dead)
                        #expect(letter.body == "bad input".bytes)
                        #expect(letter.properties.messageID == "dl-1")
                        guard case .array(let deaths)? = letter.properties.headers["x-death"],
                              case .table(let death)? = deaths.first else {
                            Issue.record("no x-death header: \(letter.properties.headers)")
                            return
                        }
                        #expect(death["reason"] == .string("rejected"))
                        #expect(death["queue"] == .string(queue))
                        try await letter.ack()
                        #expect(try await connection.queueState(queue)?.messageCount == 0)
                    }
                }
                try await connection.deleteExchange(dlx)
            }
        }

        @Test func prefetchIsHonoured() async throws {
            try await withConnection { connection in
                try await withQueue(connection, "prefetch") { queue in
                    for i in 0..<20 {
                        try await connection.publish(body: "\(i)".bytes, exchange: "", routingKey: queue, properties: AMQPProperties())
                    }
                    let consumer = connection.consume(queue: queue, prefetch: 5)
                    let collector = Collector(consumer)
                    await collector.wait(for: 5, timeout: .seconds(5))
                    try await Task.sleep(for: .milliseconds(500))
                    #expect(collector.count == 5)
                    // One ack frees exactly one slot.
                    try await collector.deliveries[0].ack()
                    await collector.wait(for: 6, timeout: .seconds(5))
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(collector.count == 6)
                    #expect(collector.deliveries.map { String(decoding: $0.body, as: UTF8.self) } == (0..<6).map(String.init))
                    // Acking twice is harmless.
                    try await collector.deliveries[0].ack()
                    await consumer.cancel()
                    await collector.finished()
                    // Acks of deliveries handed out before the cancel still work.
                    for delivery in collector.deliveries.dropFirst() { try await delivery.ack() }
                    #expect(try await connection.queueState(queue)?.messageCount == 14)
                }
            }
        }
    }
}
