import Foundation
import Logging
import PostgresNIO

/// Where a worker kind keeps its ``DeliveryAttempt``s (`herald.<kind>_send_attempts`, every one
/// of the same shape), and how they are read back. They are written in the same statement as the
/// state change they explain, and only when that change applied, so a write repeated after its
/// deadline (the first may still have landed) records nothing twice: each such statement is a
/// file of its worker module's `SQL/queries/` (`WITH v AS (change), a AS (INSERT … FROM v, unnest(calls))`),
/// binding the calls as arrays (`-- params attempts: DeliveryAttempts` in its header: the
/// statement's `attempts` property, bound as `attempts.providers`, `.results`, …). They are read back by the
/// kind's `<kind>_attempts_read.sql`, whose row is a ``DeliveryAttemptRow``.
public struct AttemptLog: Sendable {
    private let fetch: @Sendable (String, PostgresClient, Logger) async throws -> [DeliveryAttempt]

    /// `statement` reads one key's calls, oldest first.
    public init<Read: HeraldStatement>(_ statement: @escaping @Sendable (String) -> Read) where Read.Row: DeliveryAttemptRow {
        fetch = { key, client, logger in try await statement(key).rows(on: client, logger: logger).map(DeliveryAttempt.init) }
    }

    /// The calls recorded for one key, oldest first (what `heraldctl verify show-*` prints).
    public func read(_ key: String, client: PostgresClient, logger: Logger) async throws -> [DeliveryAttempt] {
        try await fetch(key, client, logger)
    }
}

/// A row of a channel's attempts table as its read statement gives it (the receipt's columns
/// are NULL where the channel keeps none).
public protocol DeliveryAttemptRow {
    var provider: String { get }
    var result: DeliveryAttempt.Result { get }
    var httpStatus: Int? { get }
    var errorCode: String? { get }
    var providerMessageID: String? { get }
    var durationMilliseconds: Int { get }
    var deliveryStatus: DeliveryStatus? { get }
    var deliveryStatusAt: Date? { get }
    var deliveryErrorCode: String? { get }
}

extension DeliveryAttempt {
    init(_ row: some DeliveryAttemptRow) {
        self.init(provider: row.provider, result: row.result, httpStatus: row.httpStatus, errorCode: row.errorCode,
                  providerMessageID: row.providerMessageID, durationMilliseconds: row.durationMilliseconds)
        if let status = row.deliveryStatus, let at = row.deliveryStatusAt {
            delivery = .init(status: status, at: at, errorCode: row.deliveryErrorCode)
        }
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
