import AMQP
import Foundation

/// Why and when Herald dead-lettered a message: the one `x-herald-dead-letter` table header
/// its dead letters carry (docs/wire-contract.md).
///
/// One table rather than a header per field: RabbitMQ decodes the headers of every message
/// published to it, and under a flood of malformed messages the six top-level headers Herald
/// wrote before kept its cost per message above the poison scenario's bound (measured in
/// docs/reliability.md: six headers 1.27× the floor, the table 1.07–1.25× over five runs).
public struct DeadLetterStamp: Sendable, Equatable {
    public static let header = "x-herald-dead-letter"

    /// Why, safe to log (names fields, never values).
    public var reason: String
    /// `invalid` (bad input, never retried) or `exhausted` (out of attempts).
    public var category: String
    /// The work queue it was taken from, e.g. `herald.sms`.
    public var queue: String
    /// The routing key it was first published with (the dead letter's own is the job kind).
    public var routingKey: String
    /// Tries made (0 when it was refused before it was claimed).
    public var attempts: Int64
    public var at: Date

    public init(reason: String, category: String, queue: String, routingKey: String, attempts: Int64, at: Date) {
        self.reason = reason
        self.category = category
        self.queue = queue
        self.routingKey = routingKey
        self.attempts = attempts
        self.at = at
    }

    /// The reason a dead letter gives: its stamp's, or else a lone `x-herald-reason` header
    /// (a letter made by hand or by a bare consumer, or a stamp of the older form not whole).
    public static func reason(in headers: [String: AMQPFieldValue]) -> String? {
        if let stamp = DeadLetterStamp(headers: headers) { return stamp.reason }
        if case .string(let reason)? = headers["x-herald-reason"] { return reason }
        return nil
    }

    /// The header's value.
    public var fieldValue: AMQPFieldValue {
        .table(["reason": .string(reason), "category": .string(category), "queue": .string(queue),
                "routing-key": .string(routingKey), "attempts": .int(attempts), "at": .timestamp(at)])
    }

    /// The stamp of a dead letter's headers; nil when Herald did not dead-letter it (the broker
    /// did, at the delivery limit) or the table lacks a field. Letters dead-lettered before the
    /// table (one `x-herald-*` header per field) are read too, so a queue that holds both kinds
    /// lists the same way.
    public init?(headers: [String: AMQPFieldValue]) {
        let fields: [String: AMQPFieldValue]
        if case .table(let table)? = headers[Self.header] {
            fields = table
        } else {
            fields = [
                "reason": headers["x-herald-reason"], "category": headers["x-herald-category"], "queue": headers["x-herald-queue"],
                "routing-key": headers["x-herald-routing-key"], "attempts": headers["x-herald-attempts"],
                "at": headers["x-herald-dead-lettered-at"],
            ].compactMapValues { $0 }
        }
        guard case .string(let reason)? = fields["reason"], case .string(let category)? = fields["category"],
              case .string(let queue)? = fields["queue"], case .string(let routingKey)? = fields["routing-key"],
              case .int(let attempts)? = fields["attempts"], case .timestamp(let at)? = fields["at"] else { return nil }
        self.init(reason: reason, category: category, queue: queue, routingKey: routingKey, attempts: attempts, at: at)
    }
}
