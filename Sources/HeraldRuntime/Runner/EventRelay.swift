import AMQP
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Publishes the `herald.event_outbox` rows of its exchange (`herald.events`) with publisher confirms
/// and deletes them in the same transaction, so an event is published at least once and
/// never lost. Several processes relay safely side by side (`FOR UPDATE SKIP LOCKED`).
public final class EventRelay: Service, Sendable {
    private let client: PostgresClient
    private let connection: AMQPConnection
    private let exchange: String
    private let batchSize: Int
    private let operationTimeout: Duration
    private let logger: Logger
    /// Messages published persistent (the jobs relay: jobs Herald enqueues itself).
    private let persistent: Bool
    private let wake = WakeSignal()

    public init(client: PostgresClient, connection: AMQPConnection, exchange: String, batchSize: Int = 256, operationTimeout: Duration = .seconds(15),
                persistent: Bool = false, logger: Logger) {
        self.persistent = persistent
        self.operationTimeout = operationTimeout
        self.client = client
        self.connection = connection
        self.exchange = exchange
        self.batchSize = batchSize
        self.logger = logger
    }

    /// Called after a commit that wrote events: relay now rather than at the next poll.
    public func poke() { wake.signal() }

    public func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            do {
                if try await withDeadline(operationTimeout, { try await self.relayOnce() }) == batchSize { continue }
            } catch {
                logger.warning("event relay failed; will retry", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            }
            await wake.wait(timeout: .seconds(1))
        }
        // The last relay at shutdown, in a task of its own: the run's cancellation would cancel it.
        let operationTimeout = operationTimeout
        _ = try? await Task { try await withDeadline(operationTimeout) { try await self.relayOnce() } }.value
    }

    /// Relays up to one batch; returns how many events went out.
    @discardableResult
    public func relayOnce() async throws -> Int {
        let logger = self.logger
        let connection = self.connection
        let exchange = self.exchange
        let limit = self.batchSize
        let persistent = self.persistent
        return try await client.withTransaction(logger: logger) { db in
            let rows = try await Prepared<TakeBatchSQL>(exchange, limit).rows(on: db, logger: logger)
            var events: [(String, String, String, Date, String?)] = []
            for row in rows { events.append(try row.decode((String, String, String, Date, String?).self)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (name, id, body, createdAt, routingKey) in events {
                    var properties = AMQPProperties()
                    properties.contentType = "application/json"
                    properties.messageID = id
                    properties.type = "\(name).v1"
                    properties.timestamp = createdAt
                    properties.appID = "herald"
                    // A job (the jobs relay's rows) is kept on the broker's disk, in a classic work or
                    // wait queue too. One scheduled through a wait queue comes back under the work
                    // queue's name: its job name stays its routing key for a retry or a replay.
                    if persistent || routingKey != nil { properties.persistent = true }
                    if routingKey != nil { properties.headers = ["x-herald-routing-key": .string(name)] }
                    group.addTask {
                        try await connection.publish(body: Array(body.utf8), exchange: exchange, routingKey: routingKey ?? name, properties: properties)
                    }
                }
                try await group.waitForAll()
            }
            return events.count
        }
    }

    /// Takes up to $2 events of exchange $1, oldest first, skipping those another relay holds.
    enum TakeBatchSQL: StatementText {
        static let sql = """
            WITH batch AS (SELECT id FROM herald.event_outbox WHERE exchange = $1::text ORDER BY id LIMIT $2::int FOR UPDATE SKIP LOCKED)
            DELETE FROM herald.event_outbox e USING batch WHERE e.id = batch.id
            RETURNING e.name, e.message_id, e.body, e.created_at, e.routing_key
            """
    }
}
