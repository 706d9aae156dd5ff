import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The SQL of `herald-push`: the decision of a job (``prepare``, one call of
/// `herald.push_prepare`) and what its push did, each in one statement.
public enum PushStore {
    public enum Decision: Sendable, Equatable {
        case send(uncertain: Bool)
        case refused(reason: String)
        case done(state: PushVerificationState)
        case busy
        /// The receipt is another device's, environment's or app's (the reason names the field).
        case invalid(reason: String)
    }

    public struct Request: Sendable {
        public var receipt: String
        public var messageID: String
        public var platform: String
        public var environment: String
        public var appID: String
        public var tokenHash: String
        public var tokenHint: String
        public var hash: StoredSecretHash
        public var ttlSeconds: Int
        public var rateMax: Int
        public var rateWindowSeconds: Int
        public var ownerKey: Int64
    }

    public static func prepare(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        try await Database.retryingConflicts { try await prepareOnce(r, client: client, logger: logger) }
    }

    private static func prepareOnce(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        let hash = ByteBuffer(bytes: r.hash.digest)
        let rows = try await client.query("""
            SELECT o_decision, o_reason, o_uncertain FROM herald.push_prepare(
                \(r.receipt), \(r.messageID), \(r.platform), \(r.environment), \(r.appID), \(r.tokenHash), \(r.tokenHint),
                \(r.hash.keyID), \(hash), \(r.ttlSeconds)::int, \(r.rateMax)::int, \(r.rateWindowSeconds)::int, \(r.ownerKey)::bigint)
            """, logger: logger)
        for try await (decision, reason, uncertain) in rows.decode((String, String?, Bool).self) {
            switch decision {
            case "send": return .send(uncertain: uncertain)
            case "refused": return .refused(reason: reason ?? "refused")
            case "done":
                guard let state = reason.flatMap(PushVerificationState.init(rawValue:)) else { break }
                return .done(state: state)
            case "busy": return .busy
            case "invalid": return .invalid(reason: reason ?? "receipt reused")
            default: break
            }
        }
        throw StoreError("herald.push_prepare gave no decision")
    }

    /// `herald.push_send_attempts`: every provider call of a receipt (`heraldctl verify show-*`
    /// prints them).
    public static let attempts = AttemptLog(table: "herald.push_send_attempts", keyColumn: "receipt")

    /// The provider accepted: the receipt is `sent`, the token healthy (valid again if it was not).
    public static func sent(_ receipt: String, tokenHash: String, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let last = attempts.last
        let query = try Self.attempts.query(change: """
            UPDATE herald.push_verifications
               SET state = 'sent', provider = $2, provider_message_id = NULLIF($3, ''), http_status = NULLIF($4, -1),
                   reason = NULL, updated_at = now()
             WHERE receipt = $1 AND state = 'sending' RETURNING receipt
            """, [receipt, last?.provider ?? "", last?.providerMessageID ?? "", last?.httpStatus ?? -1, tokenHash], attempts: attempts, final: """
            UPDATE herald.device_tokens
               SET status = 'valid', reason = NULL, detail = NULL, invalid_since = NULL,
                   pushes = pushes + 1, last_success_at = now(), updated_at = now()
             WHERE token_hash = $5 AND EXISTS (SELECT 1 FROM v)
            """)
        try await client.query(query, logger: logger)
    }

    /// A receipt refused for good: `failed`, its secret void. Binds: $1 receipt, $2 provider,
    /// $3 HTTP status (-1: none), $4 reason.
    private static let failReceipt = """
            UPDATE herald.push_verifications
               SET state = 'failed', secret_status = 'void', secret_hash = NULL, provider = $2, http_status = NULLIF($3, -1),
                   reason = $4, updated_at = now()
             WHERE receipt = $1 AND state = 'sending' RETURNING receipt
        """

    /// The token is dead: the receipt `failed` (its secret void), the token `invalid`.
    public static func tokenInvalid(_ receipt: String, tokenHash: String, invalid: InvalidToken, recorded detail: String,
                                    delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let last = attempts.last
        let query = try Self.attempts.query(
            change: Self.failReceipt,
            [receipt, last?.provider ?? "", last?.httpStatus ?? -1, "token_invalid:\(invalid.reason.rawValue)",
             tokenHash, invalid.reason.rawValue, detail, invalid.since ?? Date()], attempts: attempts, final: """
            UPDATE herald.device_tokens
               SET status = 'invalid', reason = $6, detail = $7, invalid_since = $8,
                   failures = failures + 1, last_failure_at = now(), updated_at = now()
             WHERE token_hash = $5 AND EXISTS (SELECT 1 FROM v)
            """)
        try await client.query(query, logger: logger)
    }

    /// Refused for good for another reason: the receipt `failed`, its secret void.
    public static func failed(_ receipt: String, reason: String, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let last = attempts.last
        let query = try Self.attempts.query(change: Self.failReceipt, [receipt, last?.provider ?? "", last?.httpStatus ?? -1, reason], attempts: attempts)
        try await client.query(query, logger: logger)
    }

    /// The job ran out of attempts (`herald.push_exhausted`): the receipt `failed` with `reason`,
    /// its secret void. Runs in the runner's transaction (``PushHandler/exhausted(_:reason:context:)``);
    /// throws when there is nothing of this job to end, so that no `push.failed` is emitted.
    public static func exhausted(_ receipt: String, messageID: String, platform: String, environment: String, appID: String,
                                 tokenHash: String, reason: String, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query("""
            SELECT herald.push_exhausted(\(receipt), \(messageID), \(platform), \(environment), \(appID), \(tokenHash), \(reason))
            """, logger: logger)
        for try await ended in rows.decode(Bool.self) where ended { return }
        throw StoreError("receipt \(receipt) was decided meanwhile or is being pushed: left as it is")
    }

    /// Try again later with a fresh secret (the old one is void). A call that timed out may
    /// have delivered the push all the same (counted in `uncertain_sends`).
    public static func retrying(_ receipt: String, reason: String, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let last = attempts.last
        let query = try Self.attempts.query(change: """
            UPDATE herald.push_verifications
               SET state = 'retrying', secret_status = 'void', secret_hash = NULL,
                   provider = $2, http_status = NULLIF($3, -1), reason = $4,
                   uncertain_sends = uncertain_sends + $5, updated_at = now()
             WHERE receipt = $1 AND state = 'sending' RETURNING receipt
            """, [receipt, last?.provider ?? "", last?.httpStatus ?? -1, reason, attempts.uncertainSends], attempts: attempts)
        try await client.query(query, logger: logger)
    }
}
