import AMQP
import Foundation
import Logging
import Tracing

/// The broker side of a delivery's end: ack it, send it to a delay queue (acked once the copy
/// is confirmed), publish it to the dead-letter exchange with its reason (likewise), or
/// requeue it. A publish that fails (the connection is gone) requeues instead, so nothing is lost.
struct DeliverySettlement: Sendable {
    let kind: JobKind
    let connection: AMQPConnection
    let topology: HeraldTopology
    let observer: RunnerObserver

    func ack(_ delivery: AMQPDelivery, _ logger: Logger) async {
        await settling("ack", delivery) { span in
            do {
                try await delivery.ack()
            } catch {
                observer.ackLost(error, logger)
                span?.updateAttributes { $0[TraceKey.errorType] = "ack_lost" }
            }
        }
    }

    /// Back on its queue at once (a cancelled job, a database that is not merely away). Not
    /// a cancellation: pause first, so a misconfigured worker does not spin on the queue.
    func requeue(_ delivery: AMQPDelivery, type: String, because error: any Error, _ logger: Logger) async {
        observer.requeued(type: type, because: error, logger)
        if !(error is CancellationError) { try? await Task.sleep(for: .seconds(1)) }
        await settling("nack", delivery) { _ in try? await delivery.nack(requeue: true) }
    }

    /// Re-publishes the message to delay tier `tier`, then acks the original.
    func delay(_ delivery: AMQPDelivery, type: String, tier: Int, attempt: Int, reason: String, _ logger: Logger) async {
        var properties = delivery.properties
        properties.persistent = true
        properties.headers["x-herald-attempt"] = .int(Int64(attempt))
        properties.headers["x-herald-last-error"] = .string(reason)
        properties.headers["x-herald-routing-key"] = .string(Self.originalRoutingKey(delivery))
        await move(delivery, type: type, exchange: "", routingKey: topology.retryQueue(kind, tier: tier), properties: properties, logger)
    }

    /// Publishes the message with its reason to the dead-letter exchange, then acks it.
    func deadLetter(_ delivery: AMQPDelivery, type: String, reason: String, category: String, attempts: Int, _ logger: Logger) async {
        let properties = deadLetterProperties(delivery, reason: reason, category: category, attempts: attempts)
        if await move(delivery, type: type, exchange: topology.deadLetterExchange, routingKey: kind.rawValue, properties: properties, logger) {
            observer.deadLettered(category: category)
        }
    }

    /// The same as a move for the consumer's screen: the connection publishes the copy where
    /// it read the delivery and acks the delivery on the confirm; `done` runs once it is settled
    /// (on the connection thread after the confirm, in a task after a failure requeued it).
    func deadLetterMove(_ delivery: AMQPDelivery, type: String, reason: String, category: String, attempts: Int, _ logger: Logger,
                        then done: @escaping @Sendable () -> Void) -> AMQPMove {
        AMQPMove(body: delivery.body, exchange: topology.deadLetterExchange, routingKey: kind.rawValue,
                 properties: deadLetterProperties(delivery, reason: reason, category: category, attempts: attempts)) { [self] result in
            switch result {
            case .success:
                observer.deadLettered(category: category)
                done()
            case .failure(let error):
                Task {
                    await requeue(delivery, type: type, because: error, logger)
                    done()
                }
            }
        }
    }

    private func deadLetterProperties(_ delivery: AMQPDelivery, reason: String, category: String, attempts: Int) -> AMQPProperties {
        var properties = delivery.properties
        properties.persistent = true
        properties.headers[DeadLetterStamp.header] = DeadLetterStamp(
            reason: reason, category: category, queue: topology.workQueue(kind), routingKey: Self.originalRoutingKey(delivery),
            attempts: Int64(attempts), at: Date()).fieldValue
        return properties
    }

    /// Publishes the copy, and the connection acks the original once the copy is confirmed.
    /// A failure requeues the original (a no-op if the ack was what failed: the broker has put
    /// it back already, and the copy is then there twice, as after any lost ack). True when
    /// the copy is confirmed and the original acked.
    @discardableResult
    private func move(_ delivery: AMQPDelivery, type: String, exchange: String, routingKey: String, properties: AMQPProperties, _ logger: Logger) async -> Bool {
        let failure: (any Error)? = await HeraldTracing.withSpan("publish \(exchange.isEmpty ? routingKey : exchange)", ofKind: .producer) { span in
            span?.updateAttributes { $0.messaging(operation: "publish", type: "send", exchange: exchange, routingKey: routingKey) }
            do {
                try await connection.publish(body: delivery.body, exchange: exchange, routingKey: routingKey, properties: properties, thenAck: delivery)
                return nil
            } catch {
                span?.updateAttributes { $0[TraceKey.errorType] = "broker" }
                return error
            }
        }
        guard let failure else { return true }
        await requeue(delivery, type: type, because: failure, logger)
        return false
    }

    /// A settlement of `delivery` (`ack`, `nack`) in a client span when tracing is on.
    private func settling(_ operation: String, _ delivery: AMQPDelivery, _ body: ((any Span)?) async -> Void) async {
        await HeraldTracing.withSpan("\(operation) \(topology.workQueue(kind))", ofKind: .client) { span in
            span?.updateAttributes {
                $0.messaging(operation: operation, type: "settle", exchange: delivery.exchange, routingKey: delivery.routingKey, queue: topology.workQueue(kind))
                $0[TraceKey.deliveryTag] = Int64(truncatingIfNeeded: delivery.deliveryTag)
            }
            await body(span)
        }
    }

    private static func originalRoutingKey(_ delivery: AMQPDelivery) -> String {
        if case .string(let key)? = delivery.properties.headers["x-herald-routing-key"] { return key }
        return delivery.routingKey
    }
}
