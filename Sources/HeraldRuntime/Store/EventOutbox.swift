import Logging
import PostgresNIO

/// The transactional outbox of `herald.events`: events are inserted in the transaction
/// that commits a job's outcome, and ``EventRelay`` publishes them afterwards.
public enum EventOutbox {
    public static func insert(_ events: [OutgoingEvent], exchange: String, on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        let names = events.map(\.name)
        let ids = events.map(\.messageID)
        let bodies = events.map { String(decoding: $0.body, as: UTF8.self) }
        try await Prepared<InsertSQL>(exchange, names, ids, bodies).rows(on: connection, logger: logger)
    }

    /// $1 exchange, $2 names, $3 message ids, $4 bodies.
    enum InsertSQL: StatementText {
        static let sql = """
            INSERT INTO herald.event_outbox (exchange, name, message_id, body)
            SELECT $1::text, * FROM unnest($2::text[], $3::text[], $4::text[])
            """
    }
}
