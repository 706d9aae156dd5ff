import Foundation

/// An event for exchange `herald.events`: written to the event outbox in the same
/// transaction as the job's outcome, then relayed with publisher confirms.
public struct OutgoingEvent: Sendable, Equatable {
    /// Routing key and event name, e.g. `sms.sent`.
    public var name: String
    /// Unique per event; consumers deduplicate on it.
    public var messageID: String
    /// JSON object; carries `version`, `occurred_at` and the event's fields.
    public var body: [UInt8]

    public init<Payload: Encodable>(name: String, payload: Payload, occurredAt: Date = Date()) {
        self.name = name
        self.messageID = UUID().uuidString.lowercased()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var object = (try? JSONSerialization.jsonObject(with: encoder.encode(payload))) as? [String: Any] ?? [:]
        object["version"] = 1
        object["event"] = name
        object["occurred_at"] = occurredAt.iso8601
        self.body = Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8))
    }

    public init(name: String, messageID: String, body: [UInt8]) {
        self.name = name
        self.messageID = messageID
        self.body = body
    }

    /// The AMQP `type` property: `sms.sent.v1`.
    public var typeName: String { "\(name).v1" }
}
