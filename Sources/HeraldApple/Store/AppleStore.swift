import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The SQL of `herald-apple`: the decision of a job (``prepare``, one call of
/// `herald.apple_prepare`), the stored refresh tokens, and what each call to Apple did, each
/// written in one statement with its attempt records.
public enum AppleStore {
    public enum Decision: Sendable, Equatable {
        case call(uncertain: Bool)
        /// An earlier try's exchange may have used the code: the job ended `uncertain`.
        case uncertain(reason: String)
        case refused(reason: String)
        /// Nothing to revoke: the job ended `nothing`.
        case nothing
        case done(state: AppleJobState)
        case busy
        case invalid(reason: String)
    }

    public struct Request: Sendable {
        public var messageID: String
        public var operation: AppleOperation
        public var accountID: String
        public var clientID: String
        /// Hex SHA-256 of the authorization code (``codeHash(_:)``), when the job has one.
        public var codeHash: String?
        /// The call about to be made; nil: none (nothing to revoke).
        public var step: AppleJobStep?
        public var ownerKey: Int64
    }

    /// What stands for a code in the records: its SHA-256, hex. (A code is 64 random bytes of
    /// Apple's and single use: its hash needs no key.)
    public static func codeHash(_ code: Secret) -> String {
        SHA256Hex.of(code.revealed)
    }

    /// The associated data a stored token is sealed with: it opens only in its own record.
    public static func sealingContext(accountID: String, clientID: String) -> String {
        "herald.apple_tokens\u{0}\(accountID)\u{0}\(clientID)"
    }

    public static func prepare(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        try await Database.retryingConflicts {
            let prepare = JobPrepare(messageID: r.messageID, operation: r.operation.rawValue, accountID: r.accountID, clientID: r.clientID,
                                     codeHash: r.codeHash, step: r.step?.rawValue, ownerKey: Int(r.ownerKey))
            for row in try await prepare.rows(on: client, logger: logger) {
                switch row.decision {
                case "call": return .call(uncertain: row.uncertain)
                case "uncertain": return .uncertain(reason: row.reason ?? "exchange_uncertain")
                case "refused": return .refused(reason: row.reason ?? "refused")
                case "nothing": return .nothing
                case "done":
                    guard let state = row.reason.flatMap(AppleJobState.init(rawValue:)) else { break }
                    return .done(state: state)
                case "busy": return .busy
                case "invalid": return .invalid(reason: row.reason ?? "message_id reused")
                default: break
                }
            }
            throw StoreError("herald.apple_prepare gave no decision")
        }
    }

    /// The `provider_uid` of the account's `apple.com` identity (Apple's `sub`), nil when it
    /// has none (or the account is gone).
    public static func appleIdentity(accountID: String, client: PostgresClient, logger: Logger) async throws -> String? {
        try await AccountAppleIdentity(accountID: accountID).first(on: client, logger: logger)?.appleSubject
    }

    /// The token stored for the account and client id, sealed.
    public static func storedToken(accountID: String, clientID: String, client: PostgresClient, logger: Logger) async throws -> SealedSecret? {
        guard let row = try await TokenFind(accountID: accountID, clientID: clientID).first(on: client, logger: logger) else { return nil }
        return SealedSecret(keyID: row.keyID, nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag)
    }

    /// Apple exchanged the code: its refresh token is stored (sealed), replacing an older one
    /// of the same account and client id. `then` is the job's state after it: `stored`
    /// (`apple.token`), or nil to stay `calling` with the step `revoke` (`apple.revoke` with
    /// a code: the token is kept before it is revoked, so a crash in between loses nothing).
    public static func storeToken(_ messageID: String, accountID: String, clientID: String, sealed: SealedSecret, jobsExchange: String,
                                  then state: AppleJobState?, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let httpStatus = attempts.last?.httpStatus ?? -1
        if state == nil {
            try await TokenKeptForRevoke(
                messageID: messageID, httpStatus: httpStatus, accountID: accountID, clientID: clientID, keyID: sealed.keyID, nonce: sealed.nonce,
                ciphertext: sealed.ciphertext, tag: sealed.tag, jobsExchange: jobsExchange, attempts: attempts
            ).rows(on: client, logger: logger)
        } else {
            try await TokenStored(
                messageID: messageID, httpStatus: httpStatus, accountID: accountID, clientID: clientID, keyID: sealed.keyID, nonce: sealed.nonce,
                ciphertext: sealed.ciphertext, tag: sealed.tag, jobsExchange: jobsExchange, attempts: attempts
            ).rows(on: client, logger: logger)
        }
    }

    /// Apple revoked the token: the job `revoked`, and the stored token deleted, if it is still
    /// the one revoked (`nonce` names the seal: a token stored meanwhile by a new sign-in stays).
    public static func revoked(_ messageID: String, accountID: String, clientID: String, nonce: [UInt8]?, reason: String?,
                               delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        try await JobRevoked(
            messageID: messageID, httpStatus: attempts.last?.httpStatus ?? -1, accountID: accountID, clientID: clientID, nonce: nonce ?? [],
            reason: reason ?? "", attempts: attempts
        ).rows(on: client, logger: logger)
    }

    /// Refused for good (Apple's error, or a check of its answer): the job `failed`.
    /// `state` is `.uncertain` when Apple refused a code an earlier call of this job may
    /// have exchanged already.
    public static func failed(_ messageID: String, error: String, reason: String, delivery attempts: [DeliveryAttempt], state: AppleJobState = .failed,
                              client: PostgresClient, logger: Logger) async throws {
        try await JobFailed(
            messageID: messageID, httpStatus: attempts.last?.httpStatus ?? -1, error: error, reason: reason, uncertainCalls: attempts.uncertainSends,
            state: state.rawValue, attempts: attempts
        ).rows(on: client, logger: logger)
    }

    /// Try again later. A call that timed out may have reached Apple all the same (counted in
    /// `uncertain_calls`).
    public static func retrying(_ messageID: String, reason: String, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        try await JobRetrying(
            messageID: messageID, httpStatus: attempts.last?.httpStatus ?? -1, error: attempts.last?.errorCode ?? "", reason: reason,
            uncertainCalls: attempts.uncertainSends, attempts: attempts
        ).rows(on: client, logger: logger)
    }

    /// The job ran out of attempts (`herald.apple_exhausted`): `failed` with `reason`. Runs in
    /// the runner's transaction; throws when there is nothing of this job to end, so that no
    /// event is emitted.
    public static func exhausted(_ messageID: String, operation: AppleOperation, accountID: String, clientID: String, reason: String,
                                 on connection: PostgresConnection, logger: Logger) async throws {
        let exhausted = JobExhausted(messageID: messageID, operation: operation.rawValue, accountID: accountID, clientID: clientID, reason: reason)
        for row in try await exhausted.rows(on: connection, logger: logger) where row.ended { return }
        throw StoreError("apple job \(messageID) was decided meanwhile or is running: left as it is")
    }

    /// One job's record (tests, `heraldctl verify show-apple`).
    public struct Record: Sendable, Equatable {
        public var operation: AppleOperation
        public var state: AppleJobState
        public var step: AppleJobStep?
        public var calls: Int
        public var uncertainCalls: Int
        public var httpStatus: Int?
        public var error: String?
        public var reason: String?
    }

    public static func record(_ messageID: String, client: PostgresClient, logger: Logger) async throws -> Record? {
        guard let row = try await JobRecord(messageID: messageID).first(on: client, logger: logger) else { return nil }
        return Record(operation: row.operation, state: row.state, step: row.step, calls: row.calls, uncertainCalls: row.uncertainCalls,
                      httpStatus: row.httpStatus, error: row.error, reason: row.reason)
    }
}

extension AttemptLog {
    /// `herald.apple_attempts`: every call to Apple of a job (`message_id`).
    public static let apple = AttemptLog { AppleAttemptsRead(key: $0) }
}

extension AppleAttemptsRead.Row: DeliveryAttemptRow {}
