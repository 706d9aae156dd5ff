import Foundation
import Logging
import PostgresNIO

/// The SQL of `herald-email`: the decision of a job (``prepare``) and what its send did.
public enum EmailStore {
    /// What ``prepare`` decided.
    public enum Decision: Sendable, Equatable {
        /// Send (the code just hashed is stored, if any). `uncertain`: an earlier try may have
        /// reached a provider (its worker died mid-send).
        case send(uncertain: Bool)
        /// Decided by an earlier delivery of this request; its state.
        case done(state: String)
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
        public var finalState: String?
    }

    /// Records the request (or finds it), supersedes an earlier try's pending code, and stores
    /// the new code, in one transaction.
    public static func prepare(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        try await client.withTransaction(logger: logger) { connection in
            let state = r.finalState ?? "sending"
            var inserted = false
            for try await _ in try await connection.query("""
                INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, owner_key)
                VALUES (\(r.requestID), \(r.messageID), \(r.email), \(r.mode), \(state), \(r.ownerKey))
                ON CONFLICT (request_id) DO NOTHING RETURNING 1
                """, logger: logger) {
                inserted = true
            }
            var uncertain = false
            if !inserted {
                let rows = try await connection.query("""
                    SELECT state, owner_key,
                           -- No live sender: no owner, this very job again (the runner never runs a
                           -- message id twice at once; a re-run after a database outage), or an
                           -- owner whose presence lock is gone (the worker died).
                           owner_key IS NULL OR (owner_key = \(r.ownerKey) AND message_id = \(r.messageID))
                             OR pg_try_advisory_xact_lock_shared(owner_key)
                      FROM herald.email_requests WHERE request_id = \(r.requestID) FOR UPDATE
                    """, logger: logger)
                var found: (String, Int64?, Bool)?
                for try await row in rows.decode((String, Int64?, Bool).self) { found = row }
                guard let (current, _, ownerGone) = found else { throw EmailStoreError("request row vanished") }
                switch current {
                case "sending" where !ownerGone: return .busy
                case "sending": uncertain = true
                case "retrying": break
                default: return .done(state: current)
                }
                try await connection.query("""
                    UPDATE herald.email_codes SET status = 'superseded' WHERE request_id = \(r.requestID) AND status = 'pending'
                    """, logger: logger)
                try await connection.query("""
                    UPDATE herald.email_requests
                       SET state = \(state), owner_key = \(r.ownerKey), message_id = \(r.messageID),
                           uncertain_sends = uncertain_sends + \(uncertain ? 1 : 0), updated_at = now()
                     WHERE request_id = \(r.requestID)
                    """, logger: logger)
            }
            if let code = r.code {
                let digest = ByteBuffer(bytes: code.hash.digest)
                try await connection.query("""
                    INSERT INTO herald.email_codes (request_id, email, mode, key_id, code_hash, settings, status, expires_at)
                    VALUES (\(r.requestID), \(r.email), \(r.mode), \(code.hash.keyID), \(digest), \(code.settings)::jsonb, 'pending',
                            now() + make_interval(secs => \(code.expiresSeconds)))
                    """, logger: logger)
            }
            return .send(uncertain: uncertain)
        }
    }

    /// Delivered to a provider (`state`: `sent`, or `noted` for the no-account note).
    public static func sent(_ requestID: String, state: String, provider: String, providerMessageID: String?, uncertain: Bool,
                            client: PostgresClient, logger: Logger) async throws {
        try await client.query("""
            UPDATE herald.email_requests
               SET state = \(state), reason = NULL, provider = \(provider), provider_message_id = \(providerMessageID),
                   uncertain_sends = uncertain_sends + \(uncertain ? 1 : 0), updated_at = now()
             WHERE request_id = \(requestID) AND state = 'sending'
            """, logger: logger)
    }

    /// Refused for good: the code dies with it.
    public static func failed(_ requestID: String, reason: String, client: PostgresClient, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("""
                UPDATE herald.email_requests SET state = 'failed', reason = \(reason), updated_at = now()
                 WHERE request_id = \(requestID) AND state IN ('sending', 'retrying')
                """, logger: logger)
            try await connection.query("""
                UPDATE herald.email_codes SET status = 'failed' WHERE request_id = \(requestID) AND status = 'pending'
                """, logger: logger)
        }
    }

    /// Every provider failed transiently: the job is retried with a fresh code.
    public static func retrying(_ requestID: String, reason: String, uncertain: Bool, client: PostgresClient, logger: Logger) async throws {
        try await client.query("""
            UPDATE herald.email_requests
               SET state = 'retrying', reason = \(reason), uncertain_sends = uncertain_sends + \(uncertain ? 1 : 0), updated_at = now()
             WHERE request_id = \(requestID) AND state = 'sending'
            """, logger: logger)
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

public struct EmailStoreError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
