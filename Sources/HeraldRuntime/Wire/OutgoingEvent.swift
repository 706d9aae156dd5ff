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
        self.messageID = RandomID.uuid()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every timestamp of an event has milliseconds (docs/wire-contract.md).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.iso8601Milliseconds)
        }
        // One encoding pass: the payload's fields and the envelope's in one object (a
        // decode-and-re-encode round trip was the costliest step of a job).
        let envelope = Envelope(payload: payload, name: name, occurredAt: occurredAt.iso8601Milliseconds)
        self.body = Array((try? encoder.encode(envelope)) ?? Data(#"{"event":"\#(name)","version":1}"#.utf8))
    }

    /// The payload's keys plus `version`, `event` and `occurred_at`, in one JSON object.
    private struct Envelope<Payload: Encodable>: Encodable {
        var payload: Payload
        var name: String
        var occurredAt: String
        enum Key: String, CodingKey { case version, event, occurredAt = "occurred_at" }

        func encode(to encoder: any Encoder) throws {
            try payload.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(1, forKey: .version)
            try container.encode(name, forKey: .event)
            try container.encode(occurredAt, forKey: .occurredAt)
        }
    }

    public init(name: String, messageID: String, body: [UInt8]) {
        self.name = name
        self.messageID = messageID
        self.body = body
    }

    /// The AMQP `type` property: `sms.sent.v1`.
    public var typeName: String { "\(name).v1" }
}
