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

    /// `herald.apple_attempts`: every call to Apple of a job (`message_id`).
    public static let attempts = AttemptLog(table: "herald.apple_attempts", keyColumn: "message_id")

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
            let rows = try await client.query("""
                SELECT o_decision, o_reason, o_uncertain FROM herald.apple_prepare(
                    \(r.messageID), \(r.operation), \(r.accountID), \(r.clientID), \(r.codeHash), \(r.step?.rawValue), \(r.ownerKey)::bigint)
                """, logger: logger)
            for try await (decision, reason, uncertain) in rows.decode((String, String?, Bool).self) {
                switch decision {
                case "call": return .call(uncertain: uncertain)
                case "uncertain": return .uncertain(reason: reason ?? "exchange_uncertain")
                case "refused": return .refused(reason: reason ?? "refused")
                case "nothing": return .nothing
                case "done":
                    guard let state = reason.flatMap(AppleJobState.init(rawValue:)) else { break }
                    return .done(state: state)
                case "busy": return .busy
                case "invalid": return .invalid(reason: reason ?? "message_id reused")
                default: break
                }
            }
            throw StoreError("herald.apple_prepare gave no decision")
        }
    }

    /// The `provider_uid` of the account's `apple.com` identity (Apple's `sub`), nil when it
    /// has none (or the account is gone).
    public static func appleIdentity(accountID: String, client: PostgresClient, logger: Logger) async throws -> String? {
        let rows = try await client.query("""
            SELECT provider_uid FROM herald.account_providers WHERE account_id = \(accountID) AND provider = 'apple.com'
            """, logger: logger)
        for try await uid in rows.decode(String.self) { return uid }
        return nil
    }

    /// The token stored for the account and client id, sealed.
    public static func storedToken(accountID: String, clientID: String, client: PostgresClient, logger: Logger) async throws -> SealedSecret? {
        let rows = try await client.query("""
            SELECT key_id, nonce, ciphertext, tag FROM herald.apple_tokens WHERE account_id = \(accountID) AND client_id = \(clientID)
            """, logger: logger)
        for try await (keyID, nonce, ciphertext, tag) in rows.decode((String, ByteBuffer, ByteBuffer, ByteBuffer).self) {
            return SealedSecret(keyID: keyID, nonce: Array(buffer: nonce), ciphertext: Array(buffer: ciphertext), tag: Array(buffer: tag))
        }
        return nil
    }

    /// Apple exchanged the code: its refresh token is stored (sealed), replacing an older one
    /// of the same account and client id. `then` is the job's state after it: `stored`
    /// (`apple.token`), or nil to stay `calling` with the step `revoke` (`apple.revoke` with
    /// a code: the token is kept before it is revoked, so a crash in between loses nothing).
    public static func storeToken(_ messageID: String, accountID: String, clientID: String, sealed: SealedSecret, jobsExchange: String,
                                  then state: AppleJobState?, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let change = state == nil
            ? "UPDATE herald.apple_jobs SET step = 'revoke', http_status = NULLIF($2, -1), updated_at = now() WHERE message_id = $1 AND state = 'calling' RETURNING message_id"
            : "UPDATE herald.apple_jobs SET state = 'stored', owner_key = NULL, http_status = NULLIF($2, -1), updated_at = now() WHERE message_id = $1 AND state = 'calling' RETURNING message_id"
        let query = try Self.attempts.query(change: change, [
            messageID, attempts.last?.httpStatus ?? -1, accountID, clientID, sealed.keyID,
            ByteBuffer(bytes: sealed.nonce), ByteBuffer(bytes: sealed.ciphertext), ByteBuffer(bytes: sealed.tag), jobsExchange,
        ], attempts: attempts, final: """
            INSERT INTO herald.apple_tokens (account_id, client_id, key_id, nonce, ciphertext, tag, jobs_exchange, message_id)
            SELECT $3, $4, $5, $6, $7, $8, $9, $1 FROM v
            ON CONFLICT (account_id, client_id) DO UPDATE SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce,
                ciphertext = EXCLUDED.ciphertext, tag = EXCLUDED.tag, jobs_exchange = EXCLUDED.jobs_exchange,
                message_id = EXCLUDED.message_id, updated_at = now()
            """)
        try await client.query(query, logger: logger)
    }

    /// Apple revoked the token: the job `revoked`, and the stored token deleted, if it is still
    /// the one revoked (`nonce` names the seal: a token stored meanwhile by a new sign-in stays).
    public static func revoked(_ messageID: String, accountID: String, clientID: String, nonce: [UInt8]?, reason: String?,
                               delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let query = try Self.attempts.query(change: """
            UPDATE herald.apple_jobs SET state = 'revoked', owner_key = NULL, http_status = NULLIF($2, -1), reason = NULLIF($6, ''), updated_at = now()
             WHERE message_id = $1 AND state = 'calling' RETURNING message_id
            """, [messageID, attempts.last?.httpStatus ?? -1, accountID, clientID, ByteBuffer(bytes: nonce ?? []), reason ?? ""],
            attempts: attempts, final: """
            DELETE FROM herald.apple_tokens WHERE account_id = $3 AND client_id = $4 AND nonce = $5 AND EXISTS (SELECT 1 FROM v)
            """)
        try await client.query(query, logger: logger)
    }

    /// Refused for good (Apple's error, or a check of its answer): the job `failed`.
    /// `state` is `.uncertain` when Apple refused a code an earlier call of this job may
    /// have exchanged already.
    public static func failed(_ messageID: String, error: String, reason: String, delivery attempts: [DeliveryAttempt], state: AppleJobState = .failed,
                              client: PostgresClient, logger: Logger) async throws {
        let query = try Self.attempts.query(change: """
            UPDATE herald.apple_jobs SET state = $6, owner_key = NULL, http_status = NULLIF($2, -1), error = $3, reason = $4,
                   uncertain_calls = uncertain_calls + $5, updated_at = now()
             WHERE message_id = $1 AND state = 'calling' RETURNING message_id
            """, [messageID, attempts.last?.httpStatus ?? -1, error, reason, attempts.uncertainSends, state.rawValue], attempts: attempts)
        try await client.query(query, logger: logger)
    }

    /// Try again later. A call that timed out may have reached Apple all the same (counted in
    /// `uncertain_calls`).
    public static func retrying(_ messageID: String, reason: String, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let query = try Self.attempts.query(change: """
            UPDATE herald.apple_jobs SET state = 'retrying', owner_key = NULL, http_status = NULLIF($2, -1), error = $3, reason = $4,
                   uncertain_calls = uncertain_calls + $5, updated_at = now()
             WHERE message_id = $1 AND state = 'calling' RETURNING message_id
            """, [messageID, attempts.last?.httpStatus ?? -1, attempts.last?.errorCode ?? "", reason, attempts.uncertainSends], attempts: attempts)
        try await client.query(query, logger: logger)
    }

    /// The job ran out of attempts (`herald.apple_exhausted`): `failed` with `reason`. Runs in
    /// the runner's transaction; throws when there is nothing of this job to end, so that no
    /// event is emitted.
    public static func exhausted(_ messageID: String, operation: AppleOperation, accountID: String, clientID: String, reason: String,
                                 on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query("""
            SELECT herald.apple_exhausted(\(messageID), \(operation), \(accountID), \(clientID), \(reason))
            """, logger: logger)
        for try await ended in rows.decode(Bool.self) where ended { return }
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
        let rows = try await client.query("""
            SELECT operation, state, step, calls, uncertain_calls, http_status, error, reason FROM herald.apple_jobs WHERE message_id = \(messageID)
            """, logger: logger)
        for try await row in rows.decode((AppleOperation, AppleJobState, AppleJobStep?, Int, Int, Int?, String?, String?).self) {
            return Record(operation: row.0, state: row.1, step: row.2, calls: row.3, uncertainCalls: row.4, httpStatus: row.5, error: row.6, reason: row.7)
        }
        return nil
    }
}
