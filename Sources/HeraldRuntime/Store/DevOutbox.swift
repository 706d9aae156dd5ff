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
        try await DevOutboxRecord(kind: entry.kind, messageID: entry.messageID, jobType: entry.jobType,
                                  recipient: entry.recipient, body: entry.body).rows(on: connection, logger: logger)
    }

    public static func recent(limit: Int, client: PostgresClient, logger: Logger) async throws -> [Entry] {
        try await DevOutboxRecent(limit: limit).rows(on: client, logger: logger).map {
            Entry(kind: $0.kind, messageID: $0.messageID, jobType: $0.jobType, recipient: $0.recipient, body: $0.body)
        }
    }
}
