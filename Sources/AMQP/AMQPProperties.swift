import Foundation

/// The basic-class properties of a message.
///
/// `persistent` maps to delivery mode 2 (true) or 1 (false). `timestamp` travels in whole seconds.
public struct AMQPProperties: Sendable, Equatable {
    public var contentType: String?
    public var contentEncoding: String?
    public var correlationID: String?
    public var replyTo: String?
    public var expiration: String?
    public var messageID: String?
    public var type: String?
    public var userID: String?
    public var appID: String?
    public var headers: AMQPTable
    public var persistent: Bool
    public var priority: UInt8?
    public var timestamp: Date?

    public init(contentType: String? = nil, contentEncoding: String? = nil, correlationID: String? = nil,
                replyTo: String? = nil, expiration: String? = nil, messageID: String? = nil,
                type: String? = nil, userID: String? = nil, appID: String? = nil,
                headers: AMQPTable = [:], persistent: Bool = true, priority: UInt8? = nil,
                timestamp: Date? = nil) {
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.correlationID = correlationID
        self.replyTo = replyTo
        self.expiration = expiration
        self.messageID = messageID
        self.type = type
        self.userID = userID
        self.appID = appID
        self.headers = headers
        self.persistent = persistent
        self.priority = priority
        self.timestamp = timestamp
    }
}
