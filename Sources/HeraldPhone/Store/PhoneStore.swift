import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import Logging
import PostgresNIO

/// The SQL of `herald-sms`: the decision of a job (``prepare``), what its send did
/// (``sent``, ``failed``, ``retrying``) or its giving up (``exhausted``), each in one statement.
public enum PhoneStore {
    /// What `herald.sms_prepare` decided.
    public enum Decision: Sendable, Equatable {
        /// Send the code just hashed. `uncertain`: an earlier try may have reached a provider.
        case send(uncertain: Bool)
        case reused
        case test
        case refused(reason: String)
        /// Decided before; the verification's state.
        case done(state: SMSVerificationState)
        /// A retry whose code was used, killed or expired meanwhile.
        case closed
        /// A send of this verification, or of the pending code it would share, is under way.
        case busy
        /// The verification id is another number's or purpose's (the reason names the field).
        case invalid(reason: String)

        /// A row of `herald.sms_prepare` / `herald.sms_prepare_batch`; nil for one it never gives.
        init?(_ decision: String, reason: String?, uncertain: Bool) {
            switch decision {
            case "send": self = .send(uncertain: uncertain)
            case "reused": self = .reused
            case "test": self = .test
            case "refused": self = .refused(reason: reason ?? "refused")
            case "done":
                guard let state = reason.flatMap(SMSVerificationState.init(rawValue:)) else { return nil }
                self = .done(state: state)
            case "closed": self = .closed
            case "busy": self = .busy
            case "invalid": self = .invalid(reason: reason ?? "verification_id reused")
            default: return nil
            }
        }
    }

    /// The rate limits of one request, checked in this order (``RateLimits``).
    public typealias Limits = RateLimits

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
        /// The presence key of this worker: while its lock is held, its `sending` is in progress.
        public var ownerKey: Int64 = 0
        /// Stored with the code: how its wrong tries count towards the lockout.
        public var guessing = SMSConfiguration.Guessing()
        /// The job's `tenant` ('' for none): whose pending code this request may share.
        public var tenant = ""
        /// `sms.fallback.max_paid_sends`: a pending code sent this many times is not sent again
        /// (`rate_limited:paid_sends`); nil: no budget. The worker's, as the TTL is.
        public var maxPaidSends: Int?
    }

    public static func prepare(_ request: Request, client: PostgresClient, logger: Logger) async throws -> Decision {
        try await prepare([request], client: client, logger: logger)[0]
    }

    /// Decides a group of requests in one call of `herald.sms_prepare_batch` (migration 23):
    /// the decisions in the requests' order. The settings that are the worker's (TTL, attempts,
    /// resend interval, owner key, guessing) are the first request's: ``PhoneGroups`` groups
    /// only requests that share them.
    public static func prepare(_ requests: [Request], client: PostgresClient, logger: Logger) async throws -> [Decision] {
        guard !requests.isEmpty else { return [] }
        // A concurrent first request for the same number, or a deadlock victim: decide again.
        return try await Database.retryingConflicts { try await prepareOnce(requests, client: client, logger: logger) }
    }

    /// One call of `herald.sms_prepare_batch`, without ``prepare(_:client:logger:)``'s retry of a
    /// conflict (tests call it to see one).
    static func prepareOnce(_ requests: [Request], client: PostgresClient, logger: Logger) async throws -> [Decision] {
        let r = requests[0]
        var limitRequests: [Int] = [], scopes: [String] = [], keys: [String] = [], windows: [Int] = [], maxes: [Int] = []
        for (index, request) in requests.enumerated() {
            limitRequests += Array(repeating: index + 1, count: request.limits.scopes.count)
            scopes += request.limits.scopes
            keys += request.limits.keys
            windows += request.limits.windows
            maxes += request.limits.maxes
        }
        let batch = PrepareBatch(
            verificationIDs: requests.map(\.verificationID), messageIDs: requests.map(\.messageID), phones: requests.map(\.phone),
            purposes: requests.map(\.purpose), force: requests.map(\.force), test: requests.map(\.test), keyIDs: requests.map(\.hash.keyID),
            digests: requests.map(\.hash.digest), ttlSeconds: r.ttlSeconds, maxAttempts: r.maxAttempts, resendIntervalSeconds: r.resendIntervalSeconds,
            limitRequests: limitRequests, scopes: scopes, keys: keys, windows: windows, maxes: maxes, ownerKey: Int(r.ownerKey),
            guessMaxFailures: r.guessing.maxFailures, guessWindowSeconds: r.guessing.windowSeconds, guessLockoutSeconds: r.guessing.lockoutSeconds,
            guessMaxLockoutSeconds: r.guessing.maxLockoutSeconds, tenants: requests.map(\.tenant), maxPaidSends: r.maxPaidSends)
        var decisions = [Decision?](repeating: nil, count: requests.count)
        for row in try await batch.rows(on: client, logger: logger) where (1...requests.count).contains(row.index) {
            decisions[row.index - 1] = Decision(row.decision, reason: row.reason, uncertain: row.uncertain)
        }
        return try decisions.map { decision in
            guard let decision else { throw StoreError("herald.sms_prepare_batch gave no decision") }
            return decision
        }
    }

    /// What a provider accepted, for ``sent(_:client:logger:)``.
    public struct Sent: Sendable {
        public var verificationID: String
        public var attempts: [DeliveryAttempt]
        /// The SMS's text length; nil for a message that was no SMS (WhatsApp, a call): NULL segments and encoding.
        public var encoding: SMSEncoding?
        /// The channel that carried it (`sms`, `whatsapp`, `voice`).
        public var channel: String

        public init(verificationID: String, attempts: [DeliveryAttempt], encoding: SMSEncoding?, channel: String = "sms") {
            self.verificationID = verificationID
            self.attempts = attempts
            self.encoding = encoding
            self.channel = channel
        }
    }

    /// Verifications whose SMS a provider accepted, `sent` with their attempts, in one statement.
    public static func sent(_ sends: [Sent], client: PostgresClient, logger: Logger) async throws {
        try await sentStatement(sends).rows(on: client, logger: logger)
    }

    /// ``sent(_:client:logger:)``'s statement for `sends`: each send's calls name its verification.
    static func sentStatement(_ sends: [Sent]) -> VerificationsSent {
        let accepted = sends.map(\.attempts.last)
        let calls = sends.flatMap(\.attempts)
        return VerificationsSent(
            verificationIDs: sends.map(\.verificationID), acceptedProviders: accepted.map { $0?.provider ?? "" },
            acceptedMessageIDs: accepted.map { $0?.providerMessageID ?? "" }, segments: sends.map { $0.encoding?.segments ?? -1 },
            encodings: sends.map { $0.encoding?.scheme.rawValue ?? "" }, uncertainSends: sends.map(\.attempts.uncertainSends),
            channels: sends.map(\.channel), attempts: calls,
            callVerificationIDs: sends.flatMap { sent in sent.attempts.map { _ in sent.verificationID } })
    }

    /// A permanent failure: the code is closed, so the next request sends a fresh one.
    public static func failed(_ verificationID: String, reason: String, attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        try await VerificationFailed(verificationID: verificationID, reason: reason, attempts: attempts).rows(on: client, logger: logger)
    }

    /// The job ran out of attempts (`herald.sms_exhausted`): the verification `failed` with
    /// `reason`, its code closed. Runs in the runner's transaction (``PhoneHandler/exhausted(_:reason:context:)``);
    /// throws when there is nothing of this job to end, so that no `sms.failed` is emitted.
    public static func exhausted(_ verificationID: String, messageID: String, phone: String, purpose: String, reason: String,
                          on connection: PostgresConnection, logger: Logger) async throws {
        let exhausted = VerificationExhausted(verificationID: verificationID, messageID: messageID, phone: phone, purpose: purpose, reason: reason)
        if try await exhausted.first(on: connection, logger: logger)?.ended == true { return }
        throw StoreError("verification \(verificationID) was decided meanwhile or is being sent: left as it is")
    }

    /// Every provider failed transiently: the job will be retried with a fresh code. Not an
    /// uncertain send, unless a call timed out (it may have been delivered).
    public static func retrying(_ verificationID: String, reason: String, attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        try await VerificationRetrying(verificationID: verificationID, reason: reason, uncertainSends: attempts.uncertainSends,
                                       attempts: attempts).rows(on: client, logger: logger)
    }
}
