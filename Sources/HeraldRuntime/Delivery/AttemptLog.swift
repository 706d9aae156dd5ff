import Foundation
import Logging
import PostgresNIO

/// Where a channel keeps its ``DeliveryAttempt``s (`herald.<channel>_send_attempts`, every one
/// of the same shape), and the one way they are written: in the same statement as the state
/// change they explain, and only when that change applied, so a write repeated after its
/// deadline (the first may still have landed) records nothing twice. A channel whose statements
/// are files (`SQL/queries/`) writes them the same way in each file, binding the calls as arrays
/// (`attempts.providers`, `.results`, …); this type then only names its table and reads it.
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

    /// One statement: `change` (an UPDATE returning `keyColumn`, with binds `$1…`), then the
    /// attempts of the rows it changed, then `final`, which reads the changed rows as `v`.
    public func query(change: String, _ binds: [any PostgresThrowingDynamicTypeEncodable & Sendable], attempts: [DeliveryAttempt],
                      final: String = "SELECT count(*) FROM v") throws -> PostgresQuery {
        try query(change: change, binds, attempts: attempts, keys: nil, final: final)
    }

    /// The same for the changes of several keys in one statement: `attempts[i]` belongs to the
    /// row whose `keyColumn` is `keys[i]`, and is written only if `change` changed that row.
    public func query(change: String, _ binds: [any PostgresThrowingDynamicTypeEncodable & Sendable], attempts: [DeliveryAttempt],
                      keys: [String], final: String = "SELECT count(*) FROM v") throws -> PostgresQuery {
        try query(change: change, binds, attempts: attempts, keys: Optional(keys), final: final)
    }

    private func query(change: String, _ binds: [any PostgresThrowingDynamicTypeEncodable & Sendable], attempts: [DeliveryAttempt],
                       keys: [String]?, final: String) throws -> PostgresQuery {
        PostgresQuery(unsafeSQL: sql(change: change, binds: binds.count, keyed: keys != nil, final: final),
                      binds: try bindings(binds, attempts: attempts, keys: keys))
    }

    /// The text of ``query(change:_:attempts:keys:final:)`` for `change` with `binds` binds of its
    /// own, for a statement prepared once (``Prepared``): `keyed` when several rows change.
    public func sql(change: String, binds k: Int, keyed: Bool, final: String = "SELECT count(*) FROM v") -> String {
        // One changed row: every attempt is its. Several: each attempt joins its own row.
        let rows: String
        if keyed {
            rows = """
                unnest($\(k + 1)::text[], $\(k + 2)::text[], $\(k + 3)::int[], $\(k + 4)::text[], $\(k + 5)::text[], $\(k + 6)::int[], $\(k + 7)::text[])
                       AS t(p, r, h, e, m, d, key) JOIN v ON v.\(keyColumn) = t.key
                """
        } else {
            rows = """
                v, unnest($\(k + 1)::text[], $\(k + 2)::text[], $\(k + 3)::int[], $\(k + 4)::text[], $\(k + 5)::text[], $\(k + 6)::int[])
                       AS t(p, r, h, e, m, d)
                """
        }
        return """
            WITH v AS (\(change)), a AS (
                INSERT INTO \(table) (\(keyColumn), provider, result, http_status, error_code, provider_message_id, duration_ms)
                SELECT v.\(keyColumn), p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
                  FROM \(rows))
            \(final)
            """
    }

    /// The binds of ``sql(change:binds:keyed:final:)``: `binds`, then the attempts (and their
    /// `keys` when keyed).
    public func bindings(_ binds: [any PostgresThrowingDynamicTypeEncodable & Sendable], attempts: [DeliveryAttempt],
                         keys: [String]?) throws -> PostgresBindings {
        var bindings = PostgresBindings()
        for bind in binds { try bindings.append(bind) }
        bindings.append(attempts.map(\.provider))
        bindings.append(attempts.map(\.result.rawValue))
        bindings.append(attempts.map { $0.httpStatus ?? -1 })
        bindings.append(attempts.map { $0.errorCode ?? "" })
        bindings.append(attempts.map { $0.providerMessageID ?? "" })
        bindings.append(attempts.map(\.durationMilliseconds))
        if let keys { bindings.append(keys) }
        return bindings
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
