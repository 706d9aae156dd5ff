import Foundation
import HeraldRuntime

/// `apple.notification` v1: one of Apple's server-to-server notifications, `payload` being the
/// signed JWT exactly as Apple POSTed it to the front API (`{"payload": "<JWT>"}`). The front
/// API passes it on unread; `herald-apple` verifies it (``AppleNotifications``) before acting.
public struct AppleNotificationJob: HeraldJob, Equatable {
    public static let kind = JobKind.apple
    public static let name = "apple.notification"
    public static let version = 1
    /// The most a payload may be: Apple's are well under 2 KiB.
    public static let maxPayloadBytes = 16_384

    public var version: Int
    public var payload: String

    public init(payload: String) {
        self.version = Self.version
        self.payload = payload
    }

    enum CodingKeys: String, CodingKey { case version, payload }

    /// The form only (three base64url parts); the signature and claims are the handler's checks,
    /// which need Apple's keys. Reasons name the field, never its content.
    public func validate() throws(JobValidationError) {
        guard !payload.isEmpty else { throw JobValidationError("payload must not be empty") }
        guard payload.utf8.count <= Self.maxPayloadBytes else {
            throw JobValidationError("payload must be at most \(Self.maxPayloadBytes) bytes")
        }
        let parts = payload.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ part in
            !part.isEmpty && part.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
        }) else {
            throw JobValidationError("payload must be a compact JWS (three base64url parts)")
        }
    }
}
