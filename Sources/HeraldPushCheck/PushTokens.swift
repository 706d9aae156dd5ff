import Foundation
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// Device tokens as Herald keeps them (`herald.device_tokens`): under the SHA-256 of
/// `platform:token` (APNs tokens lower-cased), with only a hint of the token for people.
public enum PushTokens {
    public static func hash(platform: PushVerificationJob.Platform, token: String) -> String {
        let normalized = platform == .apns ? token.lowercased() : token
        return SHA256Hex.of("\(platform.rawValue):\(normalized)")
    }

    /// The first six and last four characters.
    public static func hint(_ token: String) -> String {
        token.count <= 12 ? String(repeating: "*", count: token.count) : "\(token.prefix(6))…\(token.suffix(4))"
    }

    /// What Herald knows about one token.
    public struct Health: Sendable, Equatable {
        public var platform: String
        public var hint: String
        public var appID: String
        public var environment: String
        public var status: String
        public var reason: String?
        public var detail: String?
        public var invalidSince: Date?
        public var pushes: Int
        public var failures: Int
        public var lastSuccessAt: Date?
        public var lastFailureAt: Date?
    }

    public static func health(platform: PushVerificationJob.Platform, token: String, client: PostgresClient, logger: Logger) async throws -> Health? {
        guard let row = try await TokenHealth(tokenHash: hash(platform: platform, token: token)).first(on: client, logger: logger) else { return nil }
        return Health(platform: row.platform, hint: row.hint, appID: row.appID, environment: row.environment, status: row.status,
                      reason: row.reason, detail: row.detail, invalidSince: row.invalidSince, pushes: row.pushes, failures: row.failures,
                      lastSuccessAt: row.lastSuccessAt, lastFailureAt: row.lastFailureAt)
    }

    /// The app registered `token` again at `registeredAt` (it presented it after a fresh APNs
    /// or FCM registration): an invalid token whose invalidity predates that becomes valid.
    /// Returns whether it did.
    @discardableResult
    public static func registered(platform: PushVerificationJob.Platform, token: String, at registeredAt: Date, client: PostgresClient, logger: Logger) async throws -> Bool {
        let registered = TokenRegistered(tokenHash: hash(platform: platform, token: token), registeredAt: registeredAt)
        return try await registered.first(on: client, logger: logger) != nil
    }
}
