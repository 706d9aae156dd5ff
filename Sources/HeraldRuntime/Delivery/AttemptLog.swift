import Foundation
import Logging
import PostgresNIO

/// Where a channel keeps its ``DeliveryAttempt``s (`herald.<channel>_send_attempts`, every one
/// of the same shape), and how they are read back. They are written in the same statement as the
/// state change they explain, and only when that change applied, so a write repeated after its
/// deadline (the first may still have landed) records nothing twice: each such statement is a
/// file of its channel's `SQL/queries/` (`WITH v AS (change), a AS (INSERT … FROM v, unnest(calls))`),
/// binding the calls as arrays (`attempts.providers`, `.results`, …).
public struct AttemptLog: Sendable {
    /// Schema-qualified table: a constant of the channel's code, never input.
    public let table: String
    /// The column naming what was delivered (`verification_id`, `request_id`, `receipt`).
    public let keyColumn: String
    /// True when the table keeps what the providers' receipts said (`delivery_status`,
    /// `delivery_status_at`, `delivery_error_code`).
    public let receipts: Bool

    public init(table: String, keyColumn: String, receipts: Bool = false) {
        self.table = table
        self.keyColumn = keyColumn
        self.receipts = receipts
    }

    /// The calls recorded for one key, oldest first (what `heraldctl verify show-*` prints).
    public func read(_ key: String, client: PostgresClient, logger: Logger) async throws -> [DeliveryAttempt] {
        var binds = PostgresBindings()
        binds.append(key)
        let delivery = receipts ? "delivery_status, delivery_status_at, delivery_error_code" : "NULL::text, NULL::timestamptz, NULL::text"
        let rows = try await client.query(PostgresQuery(unsafeSQL: """
            SELECT provider, result, http_status, error_code, provider_message_id, duration_ms, \(delivery)
              FROM \(table) WHERE \(keyColumn) = $1 ORDER BY id
            """, binds: binds), logger: logger)
        var out: [DeliveryAttempt] = []
        for try await (provider, result, status, code, messageID, ms, delivery, at, deliveryCode)
            in rows.decode((String, DeliveryAttempt.Result, Int?, String?, String?, Int, DeliveryStatus?, Date?, String?).self) {
            var attempt = DeliveryAttempt(provider: provider, result: result, httpStatus: status, errorCode: code,
                                          providerMessageID: messageID, durationMilliseconds: ms)
            if let delivery, let at { attempt.delivery = .init(status: delivery, at: at, errorCode: deliveryCode) }
            out.append(attempt)
        }
        return out
    }
}

extension DeliveryAttempt {
    /// One provider call as `heraldctl verify show-*` and herald-api print it (no message
    /// content, nothing secret).
    public var record: [String: Any] {
        var call: [String: Any] = ["provider": provider, "result": result.rawValue, "duration_ms": durationMilliseconds]
        call["http_status"] = httpStatus
        call["error_code"] = errorCode
        call["provider_message_id"] = providerMessageID
        if let delivery {
            call["delivery_status"] = delivery.status.rawValue
            call["delivery_status_at"] = delivery.at.iso8601
            call["delivery_error_code"] = delivery.errorCode
        }
        return call
    }
}
