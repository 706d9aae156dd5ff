import Foundation
import HeraldEmailCheck
import HeraldRuntime
import Logging
import PostgresNIO

/// The SQL of `herald-email`: the decision of a job (``prepare``, one call of
/// `herald.email_prepare`) and what its send did, each in one statement.
public enum EmailStore {
    /// What ``prepare`` decided.
    public enum Decision: Sendable, Equatable {
        /// Send (the code just hashed is stored, if any). `uncertain`: an earlier try may have
        /// reached a provider (its worker died mid-send).
        case send(uncertain: Bool)
        /// Decided by an earlier delivery of this request; its state.
        case done(state: EmailRequestState)
        /// Another live worker is sending this request.
        case busy
        /// A new request over a send limit (`rate_limited:<scope>`): recorded `failed`, nothing sent.
        case refused(reason: String)
        /// The request_id was used with another email, mode or old_email, or it is a
        /// recover_email job Herald did not enqueue: the reason (names the field, never a value).
        case invalid(reason: String)
    }

    /// A code to store with the request (nil for the no-account note and for silence).
    public struct Code: Sendable {
        public var hash: StoredSecretHash
        /// JSON of the approved action code settings (returned by the consume API).
        public var settings: String
        public var expiresSeconds: Int
    }

    public struct Request: Sendable {
        public var requestID: String
        public var messageID: String
        public var email: String
        public var mode: String
        public var code: Code?
        public var ownerKey: Int64
        /// The state to record at once instead of `sending` (`no_account`: nothing is sent).
        public var finalState: EmailRequestState?
        /// verify_and_change_email: the old address and the recover_email job enqueued on
        /// `recoveryExchange` when the link is used.
        public var pairedEmail: String?
        public var recoveryJob: String?
        public var recoveryExchange: String?
        /// Counted when the request is new (``RateLimits``: email_address, ip, global).
        public var limits = RateLimits()
    }

    /// Records the request (or finds it), supersedes an earlier try's pending code, and stores
    /// the new code, in one statement.
    public static func prepare(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        try await Database.retryingConflicts { try await prepareOnce(r, client: client, logger: logger) }
    }

    private static func prepareOnce(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        let prepare = RequestPrepare(
            requestID: r.requestID, messageID: r.messageID, email: r.email, mode: r.mode, state: (r.finalState ?? .sending).rawValue,
            ownerKey: Int(r.ownerKey), keyID: r.code?.hash.keyID, codeHash: r.code?.hash.digest, settings: r.code?.settings,
            expiresSeconds: r.code?.expiresSeconds ?? 0, pairedEmail: r.pairedEmail, recoveryJob: r.recoveryJob, recoveryExchange: r.recoveryExchange,
            scopes: r.limits.scopes, keys: r.limits.keys, windows: r.limits.windows, maxes: r.limits.maxes)
        for row in try await prepare.rows(on: client, logger: logger) {
            switch (row.decision, row.state) {
            case ("send", _): return .send(uncertain: row.uncertain)
            case ("done", let current?): return .done(state: current)
            case ("busy", _): return .busy
            case ("refused", _): return .refused(reason: row.reason ?? "rate_limited")
            case ("invalid", _): return .invalid(reason: row.reason ?? "request_id was used with another request")
            default: break
            }
        }
        throw StoreError("herald.email_prepare gave no decision")
    }

    /// Delivered to a provider (`state`: `sent`, or `noted` for the no-account note).
    public static func sent(_ requestID: String, state: EmailRequestState, delivery attempts: [DeliveryAttempt],
                            client: PostgresClient, logger: Logger) async throws {
        let accepted = attempts.last
        try await RequestSent(
            requestID: requestID, state: state.rawValue, provider: accepted?.provider ?? "", providerMessageID: accepted?.providerMessageID ?? "",
            uncertainSends: attempts.uncertainSends, attempts: attempts
        ).rows(on: client, logger: logger)
    }

    /// Failed for good (a provider's final refusal, or the job dead-lettered after its last
    /// try): the code dies with it. Only while this job (`messageID`) is the request's latest
    /// try, so a duplicate job that ran out of tries never fails a request another job sent.
    /// Returns whether the request changed.
    public static func failed(_ requestID: String, messageID: String, reason: String, attempts: [DeliveryAttempt],
                              on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let failed = RequestFailed(
            requestID: requestID, reason: reason, messageID: messageID, attempts: attempts)
        return try await failed.first(on: connection, logger: logger).map { $0.changed > 0 } ?? false
    }

    /// Refused before any send (mail to a private relay address Apple does not forward to):
    /// records the request `failed` with `reason`, or ends a try of it waiting in a delay queue
    /// (`retrying`) or a recovery notice Herald queued (`queued`), its pending codes dead. A
    /// request decided otherwise, or recorded for another address or mode, is left alone; no
    /// recover_email request is made here (only Herald enqueues those). Returns whether a request
    /// was written (then `email.failed` is emitted).
    public static func refused(_ requestID: String, messageID: String, email: String, mode: String, reason: String,
                               on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let refused = RequestRefused(requestID: requestID, messageID: messageID, email: email, mode: mode, reason: reason)
        return try await refused.first(on: connection, logger: logger).map { $0.changed > 0 } ?? false
    }

    /// Every provider failed: the job is retried with a fresh code.
    public static func retrying(_ requestID: String, reason: String, attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        try await RequestRetrying(
            requestID: requestID, reason: reason, uncertainSends: attempts.uncertainSends, attempts: attempts
        ).rows(on: client, logger: logger)
    }

    /// Whether `email` (normal form) belongs to an enabled account with an email provider
    /// (`password` or `emailLink` in `herald.account_providers`, `provider_uid` the address).
    public static func hasAccount(_ email: String, client: PostgresClient, logger: Logger) async throws -> Bool {
        try await EmailHasAccount(email: email).first(on: client, logger: logger)?.exists ?? false
    }
}

extension AttemptLog {
    /// `herald.email_send_attempts`: every provider call of a request (`heraldctl verify show-email` prints them).
    public static let email = AttemptLog { EmailAttemptsRead(key: $0) }
}

extension EmailAttemptsRead.Row: DeliveryAttemptRow {}
