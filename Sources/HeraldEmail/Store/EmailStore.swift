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
            SELECT o_decision, o_state, o_uncertain, o_reason FROM herald.email_prepare(
                \(r.requestID), \(r.messageID), \(r.email), \(r.mode), \(state), \(r.ownerKey)::bigint,
                \(r.code?.hash.keyID), \(digest), \(r.code?.settings)::jsonb, \(r.code?.expiresSeconds ?? 0)::int,
                \(r.pairedEmail), \(r.recoveryJob), \(r.recoveryExchange),
                \(r.limits.scopes)::text[], \(r.limits.keys)::text[], \(r.limits.windows)::int[], \(r.limits.maxes)::int[])
            """, logger: logger)
        for try await (decision, current, uncertain, reason) in rows.decode((String, EmailRequestState?, Bool, String?).self) {
            switch (decision, current) {
            case ("send", _): return .send(uncertain: uncertain)
            case ("done", let current?): return .done(state: current)
            case ("busy", _): return .busy
            case ("refused", _): return .refused(reason: reason ?? "rate_limited")
            case ("invalid", _): return .invalid(reason: reason ?? "request_id was used with another request")
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

    /// Failed for good (a provider's final refusal, or the job dead-lettered after its last
    /// try): the code dies with it. Only while this job (`messageID`) is the request's latest
    /// try, so a duplicate job that ran out of tries never fails a request another job sent.
    /// Returns whether the request changed.
    public static func failed(_ requestID: String, messageID: String, reason: String, attempts: [DeliveryAttempt],
                              on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let query = try Self.attempts.query(change: """
            UPDATE herald.email_requests SET state = 'failed', reason = $2, updated_at = now()
             WHERE request_id = $1 AND message_id = $3 AND state IN ('sending', 'retrying')
            RETURNING request_id
            """, [requestID, reason, messageID], attempts: attempts, final: """
            , codes AS (UPDATE herald.email_codes SET status = 'failed' WHERE request_id IN (SELECT request_id FROM v) AND status = 'pending')
            SELECT count(*) FROM v
            """)
        for try await changed in try await connection.query(query, logger: logger).decode(Int.self) { return changed > 0 }
        return false
    }

    /// Refused before any send (mail to a private relay address Apple does not forward to):
    /// records the request `failed` with `reason`, or ends a try of it waiting in a delay queue
    /// (`retrying`) or a recovery notice Herald queued (`queued`), its pending codes dead. A
    /// request decided otherwise, or recorded for another address or mode, is left alone; no
    /// recover_email request is made here (only Herald enqueues those). Returns whether a request
    /// was written (then `email.failed` is emitted).
    public static func refused(_ requestID: String, messageID: String, email: String, mode: String, reason: String,
                               on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("""
            WITH v AS (
                INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, reason)
                SELECT \(requestID), \(messageID), \(email), \(mode), 'failed', \(reason) WHERE \(mode) <> 'recover_email'
                ON CONFLICT (request_id) DO UPDATE
                   SET state = 'failed', reason = EXCLUDED.reason, message_id = EXCLUDED.message_id, owner_key = NULL, updated_at = now()
                 WHERE herald.email_requests.state IN ('queued', 'retrying')
                   AND herald.email_requests.email = EXCLUDED.email AND herald.email_requests.mode = EXCLUDED.mode
                RETURNING request_id
            ), codes AS (
                UPDATE herald.email_codes SET status = 'failed' WHERE request_id IN (SELECT request_id FROM v) AND status = 'pending'
            )
            SELECT count(*)::int FROM v
            """, logger: logger)
        for try await changed in rows.decode(Int.self) { return changed > 0 }
        return false
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
