import Foundation
import Logging
import PostgresNIO

/// The SQL of `herald-push`: the decision of a job (``prepare``, one call of
/// `herald.push_prepare`) and what its push did, each in one statement.
public enum PushStore {
    public enum Decision: Sendable, Equatable {
        case send(uncertain: Bool)
        case refused(reason: String)
        case done(state: String)
        case busy
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
            case "done": return .done(state: reason ?? "")
            case "busy": return .busy
            default: break
            }
        }
        throw PushStoreError("herald.push_prepare gave no decision")
    }

    /// The provider accepted: the receipt is `sent`, the token healthy (valid again if it was not).
    public static func sent(_ receipt: String, tokenHash: String, provider: String, providerMessageID: String?, httpStatus: Int?, client: PostgresClient, logger: Logger) async throws {
        try await client.query("""
            WITH v AS (
                UPDATE herald.push_verifications
                   SET state = 'sent', provider = \(provider), provider_message_id = \(providerMessageID), http_status = \(httpStatus),
                       reason = NULL, updated_at = now()
                 WHERE receipt = \(receipt) AND state = 'sending' RETURNING receipt)
            UPDATE herald.device_tokens
               SET status = 'valid', reason = NULL, detail = NULL, invalid_since = NULL,
                   pushes = pushes + 1, last_success_at = now(), updated_at = now()
             WHERE token_hash = \(tokenHash) AND EXISTS (SELECT 1 FROM v)
            """, logger: logger)
    }

    /// The token is dead: the receipt `failed` (its secret void), the token `invalid`.
    public static func tokenInvalid(_ receipt: String, tokenHash: String, provider: String, reason: PushTokenReason, detail: String,
                                    since: Date?, httpStatus: Int?, client: PostgresClient, logger: Logger) async throws {
        let reasonText = "token_invalid:\(reason.rawValue)"
        try await client.query("""
            WITH v AS (
                UPDATE herald.push_verifications
                   SET state = 'failed', secret_status = 'void', secret_hash = NULL, provider = \(provider), http_status = \(httpStatus),
                       reason = \(reasonText), updated_at = now()
                 WHERE receipt = \(receipt) AND state = 'sending' RETURNING receipt)
            UPDATE herald.device_tokens
               SET status = 'invalid', reason = \(reason.rawValue), detail = \(detail), invalid_since = coalesce(\(since), now()),
                   failures = failures + 1, last_failure_at = now(), updated_at = now()
             WHERE token_hash = \(tokenHash) AND EXISTS (SELECT 1 FROM v)
            """, logger: logger)
    }

    /// Refused for good for another reason: the receipt `failed`, its secret void.
    public static func failed(_ receipt: String, provider: String, reason: String, httpStatus: Int?, client: PostgresClient, logger: Logger) async throws {
        try await client.query("""
            UPDATE herald.push_verifications
               SET state = 'failed', secret_status = 'void', secret_hash = NULL, provider = \(provider), http_status = \(httpStatus),
                   reason = \(reason), updated_at = now()
             WHERE receipt = \(receipt) AND state = 'sending'
            """, logger: logger)
    }

    /// Try again later with a fresh secret (the old one is void). `uncertain`: the call timed
    /// out, so the push may have arrived all the same (counted).
    public static func retrying(_ receipt: String, provider: String, reason: String, httpStatus: Int?, uncertain: Bool, client: PostgresClient, logger: Logger) async throws {
        try await client.query("""
            UPDATE herald.push_verifications
               SET state = 'retrying', secret_status = 'void', secret_hash = NULL,
                   provider = \(provider), http_status = \(httpStatus), reason = \(reason),
                   uncertain_sends = uncertain_sends + CASE WHEN \(uncertain) THEN 1 ELSE 0 END, updated_at = now()
             WHERE receipt = \(receipt) AND state = 'sending'
            """, logger: logger)
    }
}

public struct PushStoreError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
