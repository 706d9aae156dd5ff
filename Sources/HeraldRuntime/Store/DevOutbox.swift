import Logging
import PostgresNIO

/// The dev provider's store: what would have been sent, recorded in `herald.dev_outbox`.
public enum DevOutbox {
    public struct Entry: Sendable, Equatable {
        public var kind: String
        public var messageID: String
        public var jobType: String
        /// Masked (``Redact``); the outbox is read by people.
        public var recipient: String
        /// JSON of what was delivered; never a secret in clear.
        public var body: String

        public init(kind: String, messageID: String, jobType: String, recipient: String, body: String) {
            self.kind = kind
            self.messageID = messageID
            self.jobType = jobType
            self.recipient = recipient
            self.body = body
        }
    }

    public static func record(_ entry: Entry, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO herald.dev_outbox (kind, message_id, job_type, recipient, body)
            VALUES (\(entry.kind), \(entry.messageID), \(entry.jobType), \(entry.recipient), \(entry.body)::jsonb)
            ON CONFLICT (message_id) DO NOTHING
            """, logger: logger)
    }

    public static func recent(limit: Int, client: PostgresClient, logger: Logger) async throws -> [Entry] {
        let rows = try await client.query("""
            SELECT kind, message_id, job_type, recipient, body::text FROM herald.dev_outbox ORDER BY id DESC LIMIT \(limit)
            """, logger: logger)
        var out: [Entry] = []
        for try await (kind, id, type, recipient, body) in rows.decode((String, String, String, String, String).self) {
            out.append(Entry(kind: kind, messageID: id, jobType: type, recipient: recipient, body: body))
        }
        return out
    }
}
