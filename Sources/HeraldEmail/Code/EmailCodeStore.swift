import Foundation
import HeraldEmailCheck
import HeraldRuntime
import Logging
import PostgresNIO

/// The SQL of `email.code` jobs: the decision (`herald.email_otp_prepare`) and what the send did
/// (`herald.email_otp_settle`), each one call of a function of `SQL/functions/`.
public enum EmailCodeStore {
    /// What `herald.email_otp_prepare` decided.
    public enum Decision: Sendable, Equatable {
        /// Mail the code just hashed. `uncertain`: an earlier try may have reached a provider.
        case send(uncertain: Bool)
        /// The code mailed moments ago answers this verification too: nothing is sent.
        case reused
        /// `locked_out` or `rate_limited:<scope>`: recorded `refused`, nothing sent.
        case refused(reason: String)
        /// Decided by an earlier delivery; the verification's state.
        case done(state: EmailCodeVerificationState)
        /// A retry whose code was used, killed or expired meanwhile.
        case closed
        /// A send of this verification, or of the pending code it would share, is under way.
        case busy
        /// The verification id is another address's or purpose's (the reason names the field).
        case invalid(reason: String)

        init?(_ decision: String, reason: String?, uncertain: Bool) {
            switch decision {
            case "send": self = .send(uncertain: uncertain)
            case "reused": self = .reused
            case "refused": self = .refused(reason: reason ?? "refused")
            case "done":
                guard let state = reason.flatMap(EmailCodeVerificationState.init(rawValue:)) else { return nil }
                self = .done(state: state)
            case "closed": self = .closed
            case "busy": self = .busy
            case "invalid": self = .invalid(reason: reason ?? "verification_id was used with another request")
            default: return nil
            }
        }
    }

    public struct Request: Sendable {
        public var verificationID: String
        public var messageID: String
        /// Normal form (``EmailAddress/normalize(_:)``).
        public var email: String
        public var purpose: String
        public var force: Bool
        public var hash: StoredSecretHash
        public var ttlSeconds: Int
        public var maxAttempts: Int
        public var resendIntervalSeconds: Int
        /// `email.limits.*`, counted with the links' requests.
        public var limits: RateLimits
        /// The presence key of this worker: while its lock is held, its `sending` is in progress.
        public var ownerKey: Int64
        /// Stored with the code: how its wrong tries count towards the address's lockout.
        public var guessing: GuessingPolicy
        /// The job's `tenant` ('' for none): whose pending code this request may share.
        public var tenant = ""
    }

    public static func prepare(_ r: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        // A concurrent first request for the same address and purpose, or a deadlock victim: decide again.
        try await Database.retryingConflicts {
            let prepare = CodePrepare(
                verificationID: r.verificationID, messageID: r.messageID, email: r.email, purpose: r.purpose, force: r.force,
                keyID: r.hash.keyID, codeHash: r.hash.digest, ttlSeconds: r.ttlSeconds, maxAttempts: r.maxAttempts,
                resendIntervalSeconds: r.resendIntervalSeconds, scopes: r.limits.scopes, keys: r.limits.keys, windows: r.limits.windows,
                maxes: r.limits.maxes, ownerKey: Int(r.ownerKey), guessLimit: r.guessing.maxFailures, guessWindowSeconds: r.guessing.windowSeconds,
                lockoutSeconds: r.guessing.lockoutSeconds, lockoutMaxSeconds: r.guessing.maxLockoutSeconds, tenant: r.tenant)
            for row in try await prepare.rows(on: client, logger: logger) {
                if let decided = Decision(row.decision, reason: row.reason, uncertain: row.uncertain) { return decided }
            }
            throw StoreError("herald.email_otp_prepare gave no decision")
        }
    }

    /// What a send ended in, for ``settle(_:on:logger:)``.
    public struct Settlement: Sendable {
        public var verificationID: String
        /// The job's message id (a `failed` applies only while it is the verification's latest job).
        public var messageID: String
        /// `sent`, `retrying` or `failed`.
        public var state: EmailCodeVerificationState
        public var reason: String?
        public var attempts: [DeliveryAttempt]
    }

    /// Records the send's end and its provider calls (`herald.email_send_attempts`, keyed by the
    /// verification id) in one call; the calls are written only when the change applied. Returns
    /// whether it applied.
    @discardableResult
    public static func settle(_ s: Settlement, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let accepted = s.state == .sent ? s.attempts.last : nil
        let settle = CodeSettle(
            verificationID: s.verificationID, messageID: s.messageID, state: s.state.rawValue, reason: s.reason ?? "",
            provider: accepted?.provider ?? "", providerMessageID: accepted?.providerMessageID ?? "", uncertainSends: s.attempts.uncertainSends,
            attempts: s.attempts)
        return try await settle.first(on: connection, logger: logger)?.applied ?? false
    }

    @discardableResult
    public static func settle(_ s: Settlement, client: PostgresClient, logger: Logger) async throws -> Bool {
        try await client.withConnection { try await settle(s, on: $0, logger: logger) }
    }

    /// `heraldctl verify show-email`'s view of an `email.code` verification (JSON: state, masked
    /// address, purpose, provider, its code's status, tries and expiry, and the provider calls;
    /// never the code or its hash); nil when there is none.
    public static func record(_ verificationID: String, client: PostgresClient, logger: Logger) async throws -> [String: Any]? {
        guard let json = try await CodeShow(verificationID: verificationID).first(on: client, logger: logger)?.record,
              var record = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        if let email = record["email"] as? String { record["email"] = Redact.email(email) }
        // A list, as a request's link codes are shown.
        record["codes"] = record.removeValue(forKey: "code").map { [$0] } ?? []
        record["provider_calls"] = try await AttemptLog.email.read(verificationID, client: client, logger: logger).map(\.record)
        return record
    }
}
