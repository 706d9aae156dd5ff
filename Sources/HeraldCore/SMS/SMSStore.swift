import Foundation
import Logging
import PostgresNIO

/// The SQL of `herald-sms`: the decision of a job (``prepare``), what its send did
/// (``sent``, ``failed``, ``retrying``), each in one statement.
public enum SMSStore {
    /// What `herald.sms_prepare` decided.
    public enum Decision: Sendable, Equatable {
        /// Send the code just hashed. `uncertain`: an earlier try may have reached a provider.
        case send(uncertain: Bool)
        case reused
        case test
        case refused(reason: String)
        /// Decided before; the verification's state.
        case done(state: String)
        /// A retry whose code was used, killed or replaced meanwhile.
        case closed
    }

    /// The rate limits of one request, checked in this order.
    public struct Limits: Sendable {
        public var scopes: [String] = []
        public var keys: [String] = []
        public var windows: [Int] = []
        public var maxes: [Int] = []

        public init() {}

        public mutating func add(_ scope: String, key: String, _ limit: SMSConfiguration.Limit) {
            scopes.append(scope)
            keys.append(key)
            windows.append(limit.windowSeconds)
            maxes.append(limit.max)
        }
    }

    public struct Request: Sendable {
        public var verificationID: String
        public var messageID: String
        public var phone: String
        public var purpose: String
        public var force: Bool
        public var test: Bool
        public var hash: StoredSecretHash
        public var ttlSeconds: Int
        public var maxAttempts: Int
        public var resendIntervalSeconds: Int
        public var limits: Limits
    }

    public static func prepare(_ request: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        // A concurrent first request for the same number, or a deadlock victim: decide again.
        for attempt in 1... {
            do {
                return try await prepareOnce(request, client: client, logger: logger)
            } catch let error as PSQLError where attempt < 5 && ["40001", "40P01", "23505"].contains(error.serverInfo?[.sqlState] ?? "") {
                continue
            }
        }
        fatalError("unreachable")
    }

    private static func prepareOnce(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        let hash = ByteBuffer(bytes: r.hash.digest)
        let rows = try await client.query("""
            SELECT o_decision, o_reason, o_uncertain FROM herald.sms_prepare(
                \(r.verificationID), \(r.messageID), \(r.phone), \(r.purpose), \(r.force), \(r.test), \(r.hash.keyID), \(hash),
                \(r.ttlSeconds)::int, \(r.maxAttempts)::int, \(r.resendIntervalSeconds)::int,
                \(r.limits.scopes)::text[], \(r.limits.keys)::text[], \(r.limits.windows)::int[], \(r.limits.maxes)::int[])
            """, logger: logger)
        for try await (decision, reason, uncertain) in rows.decode((String, String?, Bool).self) {
            switch decision {
            case "send": return .send(uncertain: uncertain)
            case "reused": return .reused
            case "test": return .test
            case "refused": return .refused(reason: reason ?? "refused")
            case "done": return .done(state: reason ?? "")
            case "closed": return .closed
            default: break
            }
        }
        throw SMSStoreError("herald.sms_prepare gave no decision")
    }

    /// One provider call, as recorded.
    public struct Attempt: Sendable, Equatable {
        public enum Result: String, Sendable { case accepted, rejected, transient, timeout }
        public var provider: String
        public var result: Result
        public var httpStatus: Int?
        public var errorCode: String?
        public var providerMessageID: String?
        public var durationMilliseconds: Int
    }

    /// The attempts as one `INSERT … SELECT FROM unnest(…)` CTE, so that recording them and
    /// the verification's new state is one statement.
    private static func attemptsCTE(_ verificationID: String, _ attempts: [Attempt]) -> PostgresQuery {
        """
        WITH a AS (
            INSERT INTO herald.sms_send_attempts (verification_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
            SELECT \(verificationID), p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
              FROM unnest(\(attempts.map(\.provider))::text[], \(attempts.map(\.result.rawValue))::text[], \(attempts.map { $0.httpStatus ?? -1 })::int[],
                          \(attempts.map { $0.errorCode ?? "" })::text[], \(attempts.map { $0.providerMessageID ?? "" })::text[],
                          \(attempts.map(\.durationMilliseconds))::int[]) AS t(p, r, h, e, m, d))
        """
    }

    public static func sent(_ verificationID: String, attempts: [Attempt], message: RenderedSMS, client: PostgresClient, logger: Logger) async throws {
        let accepted = attempts.last
        var query = attemptsCTE(verificationID, attempts)
        query.sql += """
             UPDATE herald.sms_verifications
               SET state = 'sent', reason = NULL, provider = $\(query.binds.count + 2), provider_message_id = $\(query.binds.count + 3),
                   segments = $\(query.binds.count + 4), encoding = $\(query.binds.count + 5), updated_at = now()
             WHERE verification_id = $\(query.binds.count + 1) AND state = 'sending'
            """
        query.binds.append(verificationID)
        query.binds.append(accepted?.provider)
        query.binds.append(accepted?.providerMessageID)
        query.binds.append(message.encoding.segments)
        query.binds.append(message.encoding.scheme.rawValue)
        try await client.query(query, logger: logger)
    }

    /// A permanent failure: the code is closed, so the next request sends a fresh one.
    public static func failed(_ verificationID: String, reason: String, attempts: [Attempt], client: PostgresClient, logger: Logger) async throws {
        var query = attemptsCTE(verificationID, attempts)
        query.sql += """
            , v AS (
                UPDATE herald.sms_verifications SET state = 'failed', reason = $\(query.binds.count + 2), updated_at = now()
                 WHERE verification_id = $\(query.binds.count + 1) AND state IN ('sending', 'retrying') RETURNING code_id)
             UPDATE herald.sms_codes SET status = 'failed', finished_at = now()
             WHERE id IN (SELECT code_id FROM v) AND status = 'pending'
            """
        query.binds.append(verificationID)
        query.binds.append(reason)
        try await client.query(query, logger: logger)
    }

    /// Every provider failed transiently: the job will be retried with a fresh code, and
    /// that retry is not counted as an uncertain send.
    public static func retrying(_ verificationID: String, reason: String, attempts: [Attempt], client: PostgresClient, logger: Logger) async throws {
        var query = attemptsCTE(verificationID, attempts)
        query.sql += """
             UPDATE herald.sms_verifications SET state = 'retrying', reason = $\(query.binds.count + 2), updated_at = now()
             WHERE verification_id = $\(query.binds.count + 1) AND state = 'sending'
            """
        query.binds.append(verificationID)
        query.binds.append(reason)
        try await client.query(query, logger: logger)
    }
}

public struct SMSStoreError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
