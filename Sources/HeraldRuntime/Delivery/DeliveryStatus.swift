import Foundation
import NIOCore
import PostgresNIO

/// What a provider's receipt says became of a message it accepted, in the order a message goes
/// through them: `queued` (held by the provider or its carrier), `sent` (handed to the carrier
/// or the SMSC), then `delivered` or `undelivered`, either of them final. The send attempt keeps
/// the furthest one (docs/sms.md, "Delivery receipts"; the order is the SQL's).
public enum DeliveryStatus: String, StoredState, Codable {
    case queued, sent, delivered, undelivered

    /// `delivered` and `undelivered`: nothing comes after them.
    public var isFinal: Bool { self == .delivered || self == .undelivered }

    /// Read as text (being `Codable` too, for the jobs, it would otherwise be read as JSON).
    public init<JSONDecoder: PostgresJSONDecoder>(from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat,
                                                  context: PostgresDecodingContext<JSONDecoder>) throws {
        let text = try String(from: &buffer, type: type, format: format, context: context)
        guard let status = DeliveryStatus(rawValue: text) else { throw PostgresDecodingError.Code.failure }
        self = status
    }
}

extension Date {
    /// An RFC 3339 time in a job (`2026-11-27T19:02:03Z`, fractions allowed), or nil.
    public init?(rfc3339 text: String) {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
            self = date
        } else if let date = try? Date.ISO8601FormatStyle().parse(text) {
            self = date
        } else {
            return nil
        }
    }
}
