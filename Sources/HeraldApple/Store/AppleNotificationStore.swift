import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The SQL of `apple.notification`: the replay check (`herald.apple_notifications`, by `jti`)
/// and what each event changes, each in the caller's transaction.
enum AppleNotificationStore {
    /// What ``claim(_:messageID:on:logger:)`` found.
    enum Claim: Equatable {
        /// First time this `jti` is seen: act on it.
        case new
        /// This very job acted on it before (its outcome was not committed: a redelivery).
        case sameJob
        /// Another job carried this `jti` before: a replay.
        case replayed
    }

    /// Records the notification's `jti` (or finds it).
    static func claim(_ n: AppleNotification, messageID: String, eventTime: Date, on connection: PostgresConnection, logger: Logger) async throws -> Claim {
        let inserted = try await connection.query("""
            INSERT INTO herald.apple_notifications (jti, message_id, client_id, type, issued_at, event_time)
            VALUES (\(n.jwtID), \(messageID), \(n.clientID), \(n.event.type), \(n.issuedAt), \(eventTime))
            ON CONFLICT (jti) DO NOTHING RETURNING 1
            """, logger: logger)
        for try await _ in inserted.decode(Int.self) { return .new }
        let rows = try await connection.query("SELECT message_id FROM herald.apple_notifications WHERE jti = \(n.jwtID)", logger: logger)
        for try await first in rows.decode(String.self) { return first == messageID ? .sameJob : .replayed }
        return .replayed
    }

    /// Records what the notification did.
    static func finish(_ jti: String, outcome: AppleNotificationOutcome, accountID: String?, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            UPDATE herald.apple_notifications SET outcome = \(outcome.rawValue), account_id = \(accountID) WHERE jti = \(jti)
            """, logger: logger)
    }

    /// The account linked to Apple's `sub` (`apple.com` in `herald.account_providers`), locked.
    static func account(appleSubject: String, on connection: PostgresConnection, logger: Logger) async throws -> String? {
        let rows = try await connection.query("""
            SELECT account_id FROM herald.account_providers WHERE provider = 'apple.com' AND provider_uid = \(appleSubject) FOR UPDATE
            """, logger: logger)
        for try await id in rows.decode(String.self) { return id }
        return nil
    }

    /// consent-revoked: the account's Apple identity is unlinked. Returns whether a link went.
    static func unlink(accountID: String, appleSubject: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("""
            DELETE FROM herald.account_providers WHERE account_id = \(accountID) AND provider = 'apple.com' AND provider_uid = \(appleSubject)
            RETURNING 1
            """, logger: logger)
        var unlinked = false
        for try await _ in rows.decode(Int.self) { unlinked = true }
        return unlinked
    }

    /// Drops every refresh token stored for the account (Apple no longer honours them: consent
    /// withdrawn, or the Apple ID deleted), without revoking. Returns how many.
    static func dropTokens(accountID: String, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query("""
            WITH gone AS (DELETE FROM herald.apple_tokens WHERE account_id = \(accountID) RETURNING 1) SELECT count(*)::int FROM gone
            """, logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}

/// `herald.apple_notifications.outcome`: what a notification did.
public enum AppleNotificationOutcome: String, StoredState {
    /// The change was made.
    case applied
    /// A relay marking older than the one stored: nothing changed.
    case unchanged
    /// No account has this Apple identity (`consent-revoked`, `account-delete`): nothing to change.
    case noAccount = "no_account"
    /// A type Herald does not act on (recorded, so its replay is still refused).
    case ignored
}
