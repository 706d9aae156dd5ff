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
        try await FraudPauses(windowMinutes: windowMinutes, all: all).rows(on: client, logger: logger).map { r in
            Scope(scope: r.scope, key: r.key, state: r.state, pausedAt: r.pausedAt, expiresAt: r.expiresAt, sentAtPause: r.sentAtPause,
                  verifiedAtPause: r.verifiedAtPause, pauses: r.pauses, liftedAt: r.liftedAt, liftedBy: r.liftedBy, graceUntil: r.graceUntil,
                  sent: Int64(r.sent), verified: Int64(r.verified), undeliveredAtPause: r.undeliveredAtPause, undelivered: Int64(r.undelivered))
        }
    }

    /// Lifts a pause (recording who); the scope is not paused again for `graceSeconds`.
    /// False: it was not paused.
    public static func lift(scope: String, key: String, by: String, graceSeconds: Int, client: PostgresClient, logger: Logger) async throws -> Bool {
        try await FraudPauseLift(scope: scope, key: key, by: by, graceSeconds: graceSeconds).first(on: client, logger: logger)?.lifted ?? false
    }
}
