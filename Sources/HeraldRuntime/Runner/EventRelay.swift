import AMQP
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Publishes the `herald.event_outbox` rows of its exchange (`herald.events`, or the jobs
/// exchange: jobs Herald enqueues itself) with publisher confirms and deletes the confirmed
/// ones, so a row is published at least once and never lost. Several processes relay safely
/// side by side (a row is claimed for a while, `FOR UPDATE SKIP LOCKED`). No transaction is
/// open while it publishes.
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

    /// Relays up to one batch; returns how many rows it claimed. Claims the rows in one
    /// statement, publishes them with no transaction open (a slow broker holds no database
    /// connection or lock), then deletes the ones the broker confirmed; the others are claimed
    /// again once their claim (twice the operation timeout) runs out. Claims nothing while the
    /// broker is away or blocks publishing: rows claimed then would only wait in the connection's
    /// queue past their claim, and go out again with the next claim.
    @discardableResult
    public func relayOnce() async throws -> Int {
        guard connection.acceptsPublishes else { return 0 }
        let logger = self.logger
        let connection = self.connection
        let exchange = self.exchange
        let persistent = self.persistent
        let claimSeconds = Int(operationTimeout.components.seconds) * 2 + 1
        let rows = try await EventOutboxClaim(exchange: exchange, limit: batchSize, seconds: claimSeconds).rows(on: client, logger: logger)
            .sorted { $0.id < $1.id }
        guard !rows.isEmpty else { return 0 }
        let published = await withTaskGroup(of: Int?.self) { group in
            for row in rows {
                group.addTask {
                    do {
                        try await connection.publish(body: Array(row.body.utf8), exchange: exchange, routingKey: row.routingKey ?? row.name,
                                                     properties: row.properties(persistent: persistent), mandatory: row.isJob(persistent: persistent))
                        return row.id
                    } catch {
                        logger.warning("an outbox row was not published; it is claimed again later", metadata: [
                            "name": "\(row.name)", "message_id": "\(row.messageID)", "error": "\(error)"])
                        return nil
                    }
                }
            }
            var ids: [Int] = []
            for await id in group { if let id { ids.append(id) } }
            return ids
        }
        if !published.isEmpty {
            // In a task of its own: a pass the deadline gave up on still deletes what the broker
            // confirmed, instead of leaving it to be published again.
            let client = self.client
            _ = try await Task { try await EventOutboxDelete(ids: published).rows(on: client, logger: logger) }.value
        }
        return rows.count
    }
}

/// A claimed outbox row.
extension EventOutboxClaim.Row {
    /// A job (the jobs relay's rows, or one with a routing key of its own): published
    /// `mandatory`, so a job no queue takes is not lost but stays in the outbox.
    func isJob(persistent: Bool) -> Bool { persistent || routingKey != nil }

    func properties(persistent: Bool) -> AMQPProperties {
        var properties = AMQPProperties()
        properties.contentType = "application/json"
        properties.messageID = messageID
        properties.type = "\(name).v1"
        properties.timestamp = createdAt
        properties.appID = "herald"
        properties.replyTo = replyTo
        properties.correlationID = correlationID
        // A job is kept on the broker's disk, in a classic work or wait queue too. One
        // scheduled through a wait queue comes back under the work queue's name: its job
        // name stays its routing key for a retry or a replay.
        if isJob(persistent: persistent) { properties.persistent = true }
        if routingKey != nil { properties.headers["x-herald-routing-key"] = .string(name) }
        if let traceparent { properties.headers[AMQPTraceCarrier.traceparent] = .string(traceparent) }
        if let tracestate { properties.headers[AMQPTraceCarrier.tracestate] = .string(tracestate) }
        return properties
    }
}
