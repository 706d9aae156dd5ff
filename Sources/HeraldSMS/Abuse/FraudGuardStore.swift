import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The operator's side of the fraud guard (`heraldctl fraud status|lift`).
public enum FraudGuardStore {
    /// A scope the guard paused, now or before.
    public struct Scope: Sendable {
        public var scope: String
        public var key: String
        /// `paused`, `lifted`, or `expired` (a pause past its `expires_at`).
        public var state: String
        public var pausedAt: Date
        public var expiresAt: Date?
        /// Sent and verified in the window when it tripped.
        public var sentAtPause: Int
        public var verifiedAtPause: Int
        public var pauses: Int
        public var liftedAt: Date?
        public var liftedBy: String?
        public var graceUntil: Date?
        /// Sent and verified in the window now.
        public var sent: Int64
        public var verified: Int64
        /// Reported undelivered when it tripped, and in the window now.
        public var undeliveredAtPause: Int
        public var undelivered: Int64

        /// `prefix:+1876555`, as `heraldctl fraud lift` takes it.
        public var name: String { "\(scope):\(key)" }
        public var conversion: Double? { sent == 0 ? nil : Double(verified) / Double(sent) }
    }

    /// `region:JM` or `prefix:+1876555` (also `fraud_guard:prefix:+1876555`, a refusal's reason).
    public static func parse(_ text: String) -> (scope: String, key: String)? {
        var rest = Substring(text)
        if rest.hasPrefix("fraud_guard:") { rest = rest.dropFirst("fraud_guard:".count) }
        let parts = rest.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, ["region", "prefix"].contains(parts[0]), !parts[1].isEmpty else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// Paused scopes (with `all`, lifted and expired ones too), newest pause first.
    public static func status(all: Bool, windowMinutes: Int, client: PostgresClient, logger: Logger) async throws -> [Scope] {
        let rows = try await client.query("""
            SELECT p.scope, p.key,
                   CASE WHEN p.state = 'paused' AND p.expires_at <= now() THEN 'expired' ELSE p.state END,
                   p.paused_at, p.expires_at, p.sent, p.verified, p.pauses, p.lifted_at, p.lifted_by, p.grace_until,
                   coalesce(sum(c.sent), 0)::bigint, coalesce(sum(c.verified), 0)::bigint, p.undelivered, coalesce(sum(c.undelivered), 0)::bigint
              FROM herald.sms_fraud_pauses p
              LEFT JOIN herald.sms_fraud_counts c
                ON c.scope = p.scope AND c.key = p.key AND c.minute > date_trunc('minute', now()) - make_interval(mins => \(windowMinutes)::int)
             WHERE \(all) OR (p.state = 'paused' AND (p.expires_at IS NULL OR p.expires_at > now()))
             GROUP BY p.scope, p.key
             ORDER BY p.paused_at DESC
            """, logger: logger)
        var out: [Scope] = []
        for try await r in rows.decode((String, String, String, Date, Date?, Int, Int, Int, Date?, String?, Date?, Int64, Int64, Int, Int64).self) {
            out.append(Scope(scope: r.0, key: r.1, state: r.2, pausedAt: r.3, expiresAt: r.4, sentAtPause: r.5, verifiedAtPause: r.6,
                             pauses: r.7, liftedAt: r.8, liftedBy: r.9, graceUntil: r.10, sent: r.11, verified: r.12,
                             undeliveredAtPause: r.13, undelivered: r.14))
        }
        return out
    }

    /// Lifts a pause (recording who); the scope is not paused again for `graceSeconds`.
    /// False: it was not paused.
    public static func lift(scope: String, key: String, by: String, graceSeconds: Int, client: PostgresClient, logger: Logger) async throws -> Bool {
        let rows = try await client.query("SELECT herald.fraud_guard_lift(\(scope), \(key), \(by), \(graceSeconds)::int)", logger: logger)
        for try await lifted in rows.decode(Bool.self) { return lifted }
        return false
    }
}
