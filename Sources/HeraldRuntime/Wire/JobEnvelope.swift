import AMQP
import Foundation

/// What the AMQP properties of a job say (see docs/wire-contract.md).
public struct JobEnvelope: Sendable, Equatable {
    /// The idempotency key: the same `message_id` runs the side effect once.
    public var messageID: String
    /// `sms.verification.v1`
    public var typeName: String
    public var correlationID: String?
    public var timestamp: Date?
    /// The queue that waits for the worker's decision on this job (herald-api's replies queue):
    /// the worker answers there once it has decided (``JobDecision``). Nil: nobody waits.
    public var replyTo: String?

    public init(messageID: String, typeName: String, correlationID: String? = nil, timestamp: Date? = nil, replyTo: String? = nil) {
        self.messageID = messageID
        self.typeName = typeName
        self.correlationID = correlationID
        self.timestamp = timestamp
        self.replyTo = replyTo
    }

    /// The rule every `message_id` follows: 1 to 128 printable ASCII characters, no spaces.
    public static func checkMessageID(_ messageID: String) throws(JobValidationError) {
        try WireRules.identifier(messageID, field: "message_id")
    }

    /// The properties a publisher sets for a job.
    public func properties(headers: AMQPTable = [:]) -> AMQPProperties {
        var properties = AMQPProperties()
        properties.contentType = "application/json"
        properties.messageID = messageID
        properties.type = typeName
        properties.correlationID = correlationID
        properties.replyTo = replyTo
        properties.timestamp = timestamp ?? Date()
        properties.persistent = true
        properties.appID = "herald"
        properties.headers = headers
        return properties
    }

    /// Producer-supplied text in a reason: printable ASCII only, at most 64 characters.
    public static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
    }
}
