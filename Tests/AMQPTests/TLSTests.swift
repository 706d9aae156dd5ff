import AMQP
import Foundation
import Testing

extension BrokerTests {
    @Suite struct TLS {
        @Test func connectsOverTLSWithTheDevelopmentCA() async throws {
            let ca = TestEnvironment.tlsCAPath
            #expect(FileManager.default.fileExists(atPath: ca), "no CA at \(ca); run scripts/services.sh restart-rabbitmq")
            let tls = AMQPTLSConfiguration(caCertificatePath: ca, verifyPeer: true, verifyHostname: true)
            try await withConnection(url: TestEnvironment.amqpsURL, tls: tls) { connection in
                try await withQueue(connection, "tls") { queue in
                    let body = Array(repeating: UInt8(ascii: "z"), count: 300_000)  // several frames and TLS records
                    try await connection.publish(body: body, exchange: "", routingKey: queue, properties: AMQPProperties(messageID: "tls-1"))
                    let consumer = connection.consume(queue: queue, prefetch: 1)
                    let collector = Collector(consumer) { try? await $0.ack() }
                    await collector.wait(for: 1, timeout: .seconds(5))
                    #expect(collector.deliveries.first?.body == body)
                    await consumer.cancel()
                }
            }
        }

        @Test func refusesABrokerItCannotVerify() async throws {
            let url = try AMQPURL(TestEnvironment.amqpsURL)
            let connection = AMQPConnection(
                configuration: AMQPConfiguration(url: url, tls: AMQPTLSConfiguration(caCertificatePath: nil, verifyPeer: true),
                                                 connectTimeout: .seconds(1)),
                logger: TestEnvironment.logger)
            connection.start()
            let error = await amqpError { () async throws(AMQPError) in
                try await connection.waitUntilConnected(timeout: .seconds(1.5))
            }
            #expect(error == .timeout)
            #expect(!connection.isConnected)
            // A publish waiting for the connection fails with .closed when the connection is closed.
            let waiting = Task { () async -> AMQPError? in
                await amqpError { () async throws(AMQPError) in
                    try await connection.publish(body: [1], exchange: "", routingKey: "x", properties: AMQPProperties())
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            await connection.close()
            #expect(await waiting.value == .closed)
            await connection.close()  // idempotent
            let closed = await amqpError { () async throws(AMQPError) in
                try await connection.publish(body: [], exchange: "", routingKey: "x", properties: AMQPProperties())
            }
            #expect(closed == .closed)
        }
    }
}
