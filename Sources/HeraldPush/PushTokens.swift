import Foundation
import HeraldRuntime
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
        let key = hash(platform: platform, token: token)
        let rows = try await client.query("""
            SELECT platform, token_hint, app_id, environment, status, reason, detail, invalid_since, pushes, failures, last_success_at, last_failure_at
              FROM herald.device_tokens WHERE token_hash = \(key)
            """, logger: logger)
        for try await r in rows.decode((String, String, String, String, String, String?, String?, Date?, Int, Int, Date?, Date?).self) {
            return Health(platform: r.0, hint: r.1, appID: r.2, environment: r.3, status: r.4, reason: r.5, detail: r.6,
                          invalidSince: r.7, pushes: r.8, failures: r.9, lastSuccessAt: r.10, lastFailureAt: r.11)
        }
        return nil
    }

    /// The app registered `token` again at `registeredAt` (it presented it after a fresh APNs
    /// or FCM registration): an invalid token whose invalidity predates that becomes valid.
    /// Returns whether it did.
    @discardableResult
    public static func registered(platform: PushVerificationJob.Platform, token: String, at registeredAt: Date, client: PostgresClient, logger: Logger) async throws -> Bool {
        let key = hash(platform: platform, token: token)
        let rows = try await client.query("""
            UPDATE herald.device_tokens SET status = 'valid', reason = NULL, detail = NULL, invalid_since = NULL, updated_at = now()
             WHERE token_hash = \(key) AND status = 'invalid' AND invalid_since < \(registeredAt)
            RETURNING token_hash
            """, logger: logger)
        for try await _ in rows.decode(String.self) { return true }
        return false
    }
}
