import Logging
import PostgresNIO

/// The transactional outbox of `herald.events`: events are inserted in the transaction
/// that commits a job's outcome, and ``EventRelay`` publishes them afterwards.
public enum EventOutbox {
    public static func insert(_ events: [OutgoingEvent], exchange: String, on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        let (names, ids, bodies) = columns(events)
        try await EventsInsert(exchange: exchange, names: names, messageIDs: ids, bodies: bodies).rows(on: connection, logger: logger)
    }

    /// The events' columns of ``EventsInsert`` and ``JobsFinish``: names, message ids, bodies.
    static func columns(_ events: [OutgoingEvent]) -> (names: [String], ids: [String], bodies: [String]) {
        (events.map(\.name), events.map(\.messageID), events.map { String(decoding: $0.body, as: UTF8.self) })
    }
}
