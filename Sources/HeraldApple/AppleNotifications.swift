import Foundation
import HeraldAppleCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// `apple.notification`: verifies one of Apple's server-to-server notifications with the
/// identity-token checks (``AppleIdentityVerifier/verifyNotification(_:maxAge:)``: signature by
/// Apple's key set, `iss`, `aud` one of `apple.client_ids`, `iat` within
/// `apple.notifications.max_age_seconds`), refuses a `jti` seen before, and acts on its event in
/// one transaction with the `jti`'s record and the events it emits:
///
/// - `email-disabled` / `email-enabled`: the private relay address is marked undeliverable /
///   deliverable (``PrivateRelayAddresses``; herald-email reads it); `apple.relay.disabled` /
///   `apple.relay.enabled`;
/// - `consent-revoked`: the account's `apple.com` identity is unlinked and its stored refresh
///   tokens dropped; `apple.consent.revoked`;
/// - `account-delete`: the account's tokens are dropped and the account deleted
///   (``AccountStore/deleteAccount(id:reason:eventsExchange:on:logger:)``: `account.deleted`); `apple.account.deleted`.
///
/// A notification failing a check changes nothing and is dead-lettered with a reason naming
/// the check (`payload: bad_signature`, …), never the token. Apple's key set out of reach, or a
/// `kid` not (yet) in it, is retried through the delay queues.
public struct AppleNotifications: Sendable {
    /// The event types Apple sends.
    public enum EventType: String, Sendable, CaseIterable {
        case emailDisabled = "email-disabled"
        case emailEnabled = "email-enabled"
        case consentRevoked = "consent-revoked"
        case accountDelete = "account-delete"
    }

    /// The reason an account deleted by `account-delete` carries in `account.deleted`.
    public static let accountDeletedReason = "apple_account_deleted"

    let verifier: AppleIdentityVerifier
    let relay: PrivateRelayAddresses
    let settings: AppleNotificationSettings
    let eventsExchange: String
    let metrics = AppleNotificationMetrics()

    public init(verifier: AppleIdentityVerifier, relay: PrivateRelayAddresses, settings: AppleNotificationSettings, eventsExchange: String) {
        self.verifier = verifier
        self.relay = relay
        self.settings = settings
        self.eventsExchange = eventsExchange
    }

    /// The processor a `herald-apple` process runs: relay addresses hashed under
    /// `secrets.hmac_keys` (as herald-email looks them up), events on the namespace's exchange.
    public init(configuration: HeraldConfiguration, verifier: AppleIdentityVerifier) throws {
        self.init(verifier: verifier, relay: PrivateRelayAddresses(hasher: SecretHasher(keyRing: try configuration.secrets.keyRing())),
                  settings: configuration.apple.notifications,
                  eventsExchange: HeraldTopology(configuration.amqp, configuration.runner).eventsExchange)
    }

    public func handle(_ job: AppleNotificationJob, context: JobContext) async throws -> JobOutcome {
        var logger = context.logger
        let notification: AppleNotification
        do {
            notification = try await verifier.verifyNotification(job.payload, maxAge: TimeInterval(settings.maxAgeSeconds))
        } catch {
            switch error {
            case .keysUnavailable, .unknownKey:
                // Apple's keys out of reach, or a kid the cached set lacks and may publish soon.
                metrics.finished(type: "unverified", outcome: "retried")
                logger.warning("apple notification not verifiable yet; retrying", metadata: ["check": "\(error.code)"])
                throw JobFailure.transient("payload: \(error.code)")
            default:
                metrics.refused(check: error.code)
                logger.notice("apple notification refused", metadata: ["check": "\(error.code)"])
                throw JobFailure.invalid("payload: \(error.code)")
            }
        }
        logger[metadataKey: "jti"] = "\(notification.jwtID)"
        logger[metadataKey: "type"] = "\(notification.event.type)"
        logger[metadataKey: "client_id"] = "\(notification.clientID)"
        let messageID = context.envelope.messageID
        let (relay, exchange, eventTime) = (relay, eventsExchange, Self.eventTime(notification))
        let result = try await Database.retryingConflicts {
            try await context.database.withTransaction(logger: logger) { connection in
                switch try await AppleNotificationStore.claim(notification, messageID: messageID, eventTime: eventTime, on: connection, logger: logger) {
                case .replayed: return Result.replayed
                case .sameJob: return Result.duplicate
                case .new: break
                }
                let (outcome, accountID, events) = try await Self.act(notification, eventTime: eventTime, relay: relay,
                                                                       eventsExchange: exchange, on: connection, logger: logger)
                try await AppleNotificationStore.finish(notification.jwtID, outcome: outcome, accountID: accountID, on: connection, logger: logger)
                try await EventOutbox.insert(events, exchange: exchange, on: connection, logger: logger)
                return Result.acted(outcome)
            }
        }
        let type = AppleNotificationMetrics.label(notification.event.type)
        switch result {
        case .replayed:
            metrics.refused(check: "replayed")
            logger.notice("apple notification refused", metadata: ["check": "replayed"])
            throw JobFailure.invalid("payload: replayed (jti seen before)")
        case .duplicate:
            metrics.finished(type: type, outcome: "duplicate")
            return .completed()
        case .acted(let outcome):
            metrics.finished(type: type, outcome: outcome.rawValue)
            logger.info("apple notification handled", metadata: ["outcome": "\(outcome.rawValue)"])
            return .completed()
        }
    }

    enum Result: Sendable { case replayed, duplicate, acted(AppleNotificationOutcome) }

    /// The event's effect, in the transaction that records the `jti`: (outcome, the account
    /// linked to the `sub`, the events to emit).
    static func act(_ n: AppleNotification, eventTime: Date, relay: PrivateRelayAddresses, eventsExchange: String,
                    on connection: PostgresConnection, logger: Logger) async throws -> (AppleNotificationOutcome, String?, [OutgoingEvent]) {
        let accountID = try await AppleNotificationStore.account(appleSubject: n.event.subject, on: connection, logger: logger)
        let payload = { (applied: Bool, tokens: Int?, email: String?) in
            AppleNotificationEvent(clientID: n.clientID, accountID: accountID, type: n.event.type, eventTime: eventTime,
                                   applied: applied, tokensDropped: tokens, email: email.map(Redact.email))
        }
        guard let type = EventType(rawValue: n.event.type) else { return (.ignored, accountID, []) }
        switch type {
        case .emailDisabled, .emailEnabled:
            guard let email = n.event.email, PrivateRelayAddresses.isRelay(email) else {
                // Apple sends these for relay addresses only; anything else has no relay to mark.
                return (.ignored, accountID, [])
            }
            let deliverable = type == .emailEnabled
            let changed = try await relay.mark(email, deliverable: deliverable, eventTime: eventTime, on: connection, logger: logger)
            let name = deliverable ? "apple.relay.enabled" : "apple.relay.disabled"
            return (changed ? .applied : .unchanged, accountID, [OutgoingEvent(name: name, payload: payload(changed, nil, email))])
        case .consentRevoked:
            guard let accountID else {
                return (.noAccount, nil, [OutgoingEvent(name: "apple.consent.revoked", payload: payload(false, nil, nil))])
            }
            _ = try await AppleNotificationStore.unlink(accountID: accountID, appleSubject: n.event.subject, on: connection, logger: logger)
            let dropped = try await AppleNotificationStore.dropTokens(accountID: accountID, on: connection, logger: logger)
            return (.applied, accountID, [OutgoingEvent(name: "apple.consent.revoked", payload: payload(true, dropped, nil))])
        case .accountDelete:
            guard let accountID else {
                return (.noAccount, nil, [OutgoingEvent(name: "apple.account.deleted", payload: payload(false, nil, nil))])
            }
            // Tokens first: the Apple ID is gone, so there is nothing to revoke, and the account's
            // delete trigger then enqueues no apple.revoke.
            let dropped = try await AppleNotificationStore.dropTokens(accountID: accountID, on: connection, logger: logger)
            try await AccountStore.deleteAccount(id: accountID, reason: accountDeletedReason, eventsExchange: eventsExchange,
                                                 on: connection, logger: logger)
            return (.applied, accountID, [OutgoingEvent(name: "apple.account.deleted", payload: payload(true, dropped, nil))])
        }
    }

    /// `event_time` as a date: Apple documents seconds but has been seen sending milliseconds,
    /// so a value past the year 5138 in seconds is read as milliseconds. Absent: `iat`.
    static func eventTime(_ n: AppleNotification) -> Date {
        guard let raw = n.event.eventTime else { return n.issuedAt }
        return Date(timeIntervalSince1970: raw > 100_000_000_000 ? TimeInterval(raw) / 1000 : TimeInterval(raw))
    }
}

/// Payload of `apple.relay.disabled`, `apple.relay.enabled`, `apple.consent.revoked` and
/// `apple.account.deleted` (docs/wire-contract.md): never the token, the address masked.
struct AppleNotificationEvent: Encodable {
    var clientID: String
    var accountID: String?
    var type: String
    var eventTime: Date
    /// Whether anything changed (false: an older relay marking, or no linked account).
    var applied: Bool
    var tokensDropped: Int?
    var email: String?

    enum CodingKeys: String, CodingKey {
        case type, applied, email
        case clientID = "client_id", accountID = "account_id", eventTime = "event_time", tokensDropped = "tokens_dropped"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(accountID, forKey: .accountID) // null when no account has this Apple identity
        try c.encode(type, forKey: .type)
        try c.encode(eventTime, forKey: .eventTime)
        try c.encode(applied, forKey: .applied)
        try c.encodeIfPresent(tokensDropped, forKey: .tokensDropped)
        try c.encodeIfPresent(email, forKey: .email)
    }
}
