import PostgresNIO

/// Where a channel keeps its ``DeliveryAttempt``s (`herald.<channel>_send_attempts`, every one
/// of the same shape), and the one way they are written: in the same statement as the state
/// change they explain, and only when that change applied, so a write repeated after its
/// deadline (the first may still have landed) records nothing twice.
public struct AttemptLog: Sendable {
    /// Schema-qualified table: a constant of the channel's code, never input.
    public let table: String
    /// The column naming what was delivered (`verification_id`, `request_id`, `receipt`).
    public let keyColumn: String

    public init(table: String, keyColumn: String) {
        self.table = table
        self.keyColumn = keyColumn
    }

    /// One statement: `change` (an UPDATE returning `keyColumn`, with binds `$1…`), then the
    /// attempts of the rows it changed, then `final`, which reads the changed rows as `v`.
    public func query(change: String, _ binds: [any PostgresThrowingDynamicTypeEncodable & Sendable], attempts: [DeliveryAttempt],
                      final: String = "SELECT count(*) FROM v") throws -> PostgresQuery {
        var bindings = PostgresBindings()
        for bind in binds { try bindings.append(bind) }
        let k = binds.count
        try bindings.append(attempts.map(\.provider))
        try bindings.append(attempts.map(\.result.rawValue))
        try bindings.append(attempts.map { $0.httpStatus ?? -1 })
        try bindings.append(attempts.map { $0.errorCode ?? "" })
        try bindings.append(attempts.map { $0.providerMessageID ?? "" })
        try bindings.append(attempts.map(\.durationMilliseconds))
        return PostgresQuery(unsafeSQL: """
            WITH v AS (\(change)), a AS (
                INSERT INTO \(table) (\(keyColumn), provider, result, http_status, error_code, provider_message_id, duration_ms)
                SELECT v.\(keyColumn), p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
                  FROM v, unnest($\(k + 1)::text[], $\(k + 2)::text[], $\(k + 3)::int[], $\(k + 4)::text[], $\(k + 5)::text[], $\(k + 6)::int[])
                       AS t(p, r, h, e, m, d))
            \(final)
            """, binds: bindings)
    }
}
