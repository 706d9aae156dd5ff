import Foundation
import HeraldAppleCheck
import HeraldRuntime
import HeraldWire
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
        let claim = NotificationClaim(jti: n.jwtID, messageID: messageID, clientID: n.clientID, type: n.event.type, issuedAt: n.issuedAt,
                                      eventTime: eventTime)
        if try await claim.first(on: connection, logger: logger) != nil { return .new }
        guard let first = try await NotificationClaimant(jti: n.jwtID).first(on: connection, logger: logger) else { return .replayed }
        return first.messageID == messageID ? .sameJob : .replayed
    }

    /// Records what the notification did.
    static func finish(_ jti: String, outcome: AppleNotificationOutcome, accountID: String?, on connection: PostgresConnection, logger: Logger) async throws {
        try await NotificationFinish(outcome: outcome.rawValue, accountID: accountID, jti: jti).rows(on: connection, logger: logger)
    }

    /// The account linked to Apple's `sub` (`apple.com` in `herald.account_providers`), locked.
    static func account(appleSubject: String, on connection: PostgresConnection, logger: Logger) async throws -> String? {
        try await AppleAccountLock(appleSubject: appleSubject).first(on: connection, logger: logger)?.accountID
    }

    /// consent-revoked: the account's Apple identity is unlinked. Returns whether a link went.
    static func unlink(accountID: String, appleSubject: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let unlink = AppleIdentityUnlink(accountID: accountID, appleSubject: appleSubject)
        return try await unlink.first(on: connection, logger: logger) != nil
    }

    /// Drops every refresh token stored for the account (Apple no longer honours them: consent
    /// withdrawn, or the Apple ID deleted), without revoking. Returns how many.
    static func dropTokens(accountID: String, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        try await TokensDrop(accountID: accountID).first(on: connection, logger: logger)?.dropped ?? 0
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
