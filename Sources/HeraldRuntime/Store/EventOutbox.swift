import Logging
import PostgresNIO

/// The transactional outbox of `herald.events`: events are inserted in the transaction
/// that commits a job's outcome, and ``EventRelay`` publishes them afterwards.
public enum EventOutbox {
    public static func insert(_ events: [OutgoingEvent], exchange: String, on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        let (names, ids, bodies) = columns(events)
        try await Prepared<InsertSQL>(exchange, names, ids, bodies).rows(on: connection, logger: logger)
    }

    /// The binds of ``insert(from:)`` after the exchange: names, message ids, bodies.
    static func columns(_ events: [OutgoingEvent]) -> (names: [String], ids: [String], bodies: [String]) {
        (events.map(\.name), events.map(\.messageID), events.map { String(decoding: $0.body, as: UTF8.self) })
    }

    /// The insert with its binds from `$n`: the exchange, then ``columns(_:)``.
    static func insert(from n: Int) -> String {
        """
        INSERT INTO herald.event_outbox (exchange, name, message_id, body)
        SELECT $\(n)::text, * FROM unnest($\(n + 1)::text[], $\(n + 2)::text[], $\(n + 3)::text[])
        """
    }

    /// $1 exchange, $2 names, $3 message ids, $4 bodies.
    enum InsertSQL: StatementText {
        static let sql = insert(from: 1)
    }
}
