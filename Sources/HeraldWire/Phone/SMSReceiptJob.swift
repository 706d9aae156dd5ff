import Foundation
import HeraldRuntime

/// `sms.receipt` v1: what a provider reported about an SMS it accepted. herald-api publishes one
/// per valid, signed callback (`/v1/receipts/…`); herald-sms applies it to the send attempt the
/// provider's message id names (``PhoneStore/applyReceipt(_:client:logger:)``).
public struct SMSReceiptJob: HeraldJob, Equatable {
    public static let kind = JobKind.sms
    public static let name = "sms.receipt"
    public static let version = 1

    /// The providers that send receipts.
    public enum Provider: String, Codable, Sendable, CaseIterable {
        case twilio, kannel, webhook, whatsapp
        /// Twilio's Calls API (the voice channel): its call status callbacks.
        case twilioVoice = "twilio_voice"
    }

    public var version: Int
    public var provider: Provider
    /// The provider's name for the message: Twilio's `SM…` sid, the id Herald gave Kannel in the
    /// dlr-url, the webhook provider's `message_id`.
    public var providerMessageID: String
    public var status: DeliveryStatus
    /// The provider's own word for it (Twilio's `failed`, Kannel's DLR type `16`), for operators.
    public var providerStatus: String?
    /// The provider's error code (`twilio-30003`, `smpp-err-0b1`), when it gave one.
    public var errorCode: String?
    /// When the status happened, if the provider says (RFC 3339).
    public var occurredAt: String?
    /// When herald-api received the callback (RFC 3339).
    public var receivedAt: String

    public init(provider: Provider, providerMessageID: String, status: DeliveryStatus, providerStatus: String? = nil,
                errorCode: String? = nil, occurredAt: Date? = nil, receivedAt: Date = Date()) {
        self.version = Self.version
        self.provider = provider
        self.providerMessageID = providerMessageID
        self.status = status
        self.providerStatus = providerStatus
        self.errorCode = errorCode
        self.occurredAt = occurredAt?.iso8601
        self.receivedAt = receivedAt.iso8601
    }

    enum CodingKeys: String, CodingKey {
        case version, provider, status
        case providerMessageID = "provider_message_id", providerStatus = "provider_status", errorCode = "error_code"
        case occurredAt = "occurred_at", receivedAt = "received_at"
    }

    /// When herald-api received the callback (now, for a time that does not parse: validation refuses it).
    public var receivedTime: Date { Date(rfc3339: receivedAt) ?? Date() }

    /// When the status happened: the provider's time, else the callback's.
    public var statusTime: Date { occurredAt.flatMap(Date.init(rfc3339:)) ?? receivedTime }

    /// The job's message id: one per provider message and status, so a callback the provider
    /// sends again is the same job (the ledger handles it once).
    public var messageID: String {
        "rcpt-" + String(SHA256Hex.of("\(provider.rawValue)\u{0}\(providerMessageID)\u{0}\(status.rawValue)\u{0}\(errorCode ?? "")").prefix(40))
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(providerMessageID, field: "provider_message_id")
        if let providerStatus { try Self.short(providerStatus, field: "provider_status") }
        if let errorCode { try Self.short(errorCode, field: "error_code") }
        if let occurredAt, Date(rfc3339: occurredAt) == nil { throw JobValidationError("occurred_at must be an RFC 3339 time") }
        guard Date(rfc3339: receivedAt) != nil else { throw JobValidationError("received_at must be an RFC 3339 time") }
    }

    private static func short(_ value: String, field: String) throws(JobValidationError) {
        guard (1...64).contains(value.utf8.count), value.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }) else {
            throw JobValidationError("\(field) must be 1 to 64 printable ASCII characters")
        }
    }
}
