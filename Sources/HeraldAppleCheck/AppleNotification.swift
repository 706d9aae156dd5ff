import Foundation

/// A verified server-to-server notification (Apple POSTs `{"payload": "<JWT>"}` to the
/// endpoint registered in the developer portal): its id and its one event.
public struct AppleNotification: Sendable, Equatable {
    /// One event of `events`, which Apple sends as a JSON string.
    public struct Event: Sendable, Equatable, Decodable {
        /// `email-disabled`, `email-enabled`, `consent-revoked` or `account-delete`.
        public var type: String
        /// The user (`sub` of their identity tokens).
        public var subject: String
        public var email: String?
        public var isPrivateEmail: Bool?
        /// `event_time` as Apple sends it (a Unix time, in seconds in Apple's documentation).
        public var eventTime: Int64?

        enum CodingKeys: String, CodingKey {
            case type, subject = "sub", email, isPrivateEmail = "is_private_email", eventTime = "event_time"
        }

        public init(type: String, subject: String, email: String? = nil, isPrivateEmail: Bool? = nil, eventTime: Int64? = nil) {
            self.type = type
            self.subject = subject
            self.email = email
            self.isPrivateEmail = isPrivateEmail
            self.eventTime = eventTime
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            type = try c.decode(String.self, forKey: .type)
            subject = try c.decode(String.self, forKey: .subject)
            email = try c.decodeIfPresent(String.self, forKey: .email)
            if let flag = try? c.decodeIfPresent(Bool.self, forKey: .isPrivateEmail) {
                isPrivateEmail = flag
            } else {
                isPrivateEmail = try c.decodeIfPresent(String.self, forKey: .isPrivateEmail).map { $0.lowercased() == "true" }
            }
            if let number = try? c.decodeIfPresent(Int64.self, forKey: .eventTime) {
                eventTime = number
            } else {
                eventTime = try c.decodeIfPresent(String.self, forKey: .eventTime).flatMap { Int64($0) }
            }
        }
    }

    /// `jti`: unique per notification (the replay check keys on it).
    public var jwtID: String
    /// `aud`: the client id the notification is for.
    public var clientID: String
    public var issuedAt: Date
    public var event: Event
}
