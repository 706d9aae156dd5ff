import Foundation
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
    }

    /// `herald.email_send_attempts`: every provider call of a request (`heraldctl verify show-*`
    /// prints them).
    public static let attempts = AttemptLog(table: "herald.email_send_attempts", keyColumn: "request_id")

    /// Records the request (or finds it), supersedes an earlier try's pending code, and stores
    /// the new code, in one statement.
    public static func prepare(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        try await Database.retryingConflicts { try await prepareOnce(r, client: client, logger: logger) }
    }

    private static func prepareOnce(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        let state = r.finalState ?? .sending
        let digest = r.code.map { ByteBuffer(bytes: $0.hash.digest) }
        let rows = try await client.query("""
            SELECT o_decision, o_state, o_uncertain FROM herald.email_prepare(
                \(r.requestID), \(r.messageID), \(r.email), \(r.mode), \(state), \(r.ownerKey)::bigint,
                \(r.code?.hash.keyID), \(digest), \(r.code?.settings)::jsonb, \(r.code?.expiresSeconds ?? 0)::int)
            """, logger: logger)
        for try await (decision, current, uncertain) in rows.decode((String, EmailRequestState, Bool).self) {
            switch decision {
            case "send": return .send(uncertain: uncertain)
            case "done": return .done(state: current)
            case "busy": return .busy
            default: break
            }
        }
        throw StoreError("herald.email_prepare gave no decision")
    }

    /// Delivered to a provider (`state`: `sent`, or `noted` for the no-account note).
    public static func sent(_ requestID: String, state: EmailRequestState, delivery attempts: [DeliveryAttempt],
                            client: PostgresClient, logger: Logger) async throws {
        let accepted = attempts.last
        let query = try Self.attempts.query(change: """
            UPDATE herald.email_requests
               SET state = $2, reason = NULL, provider = NULLIF($3, ''), provider_message_id = NULLIF($4, ''),
                   uncertain_sends = uncertain_sends + $5, updated_at = now()
             WHERE request_id = $1 AND state = 'sending'
            RETURNING request_id
            """, [requestID, state, accepted?.provider ?? "", accepted?.providerMessageID ?? "", attempts.uncertainSends], attempts: attempts)
        try await client.query(query, logger: logger)
    }

    /// Refused for good: the code dies with it.
    public static func failed(_ requestID: String, reason: String, attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let query = try Self.attempts.query(change: """
            UPDATE herald.email_requests SET state = 'failed', reason = $2, updated_at = now()
             WHERE request_id = $1 AND state IN ('sending', 'retrying')
            RETURNING request_id
            """, [requestID, reason], attempts: attempts,
            final: "UPDATE herald.email_codes SET status = 'failed' WHERE request_id IN (SELECT request_id FROM v) AND status = 'pending'")
        try await client.query(query, logger: logger)
    }

    /// Every provider failed: the job is retried with a fresh code.
    public static func retrying(_ requestID: String, reason: String, attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let query = try Self.attempts.query(change: """
            UPDATE herald.email_requests
               SET state = 'retrying', reason = $2, uncertain_sends = uncertain_sends + $3, updated_at = now()
             WHERE request_id = $1 AND state = 'sending'
            RETURNING request_id
            """, [requestID, reason, attempts.uncertainSends], attempts: attempts)
        try await client.query(query, logger: logger)
    }

    /// Whether `email` (normal form) belongs to an enabled account with an email provider
    /// (`password` or `emailLink` in `herald.account_providers`, `provider_uid` the address).
    public static func hasAccount(_ email: String, client: PostgresClient, logger: Logger) async throws -> Bool {
        let rows = try await client.query("""
            SELECT EXISTS (SELECT 1 FROM herald.account_providers p JOIN herald.accounts a ON a.id = p.account_id
                            WHERE p.provider IN ('password', 'emailLink') AND lower(p.provider_uid) = lower(\(email)) AND NOT a.disabled)
            """, logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }
}
