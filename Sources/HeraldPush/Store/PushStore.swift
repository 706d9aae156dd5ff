import Foundation
import HeraldPushCheck
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
        let prepare = ReceiptPrepare(
            receipt: r.receipt, messageID: r.messageID, platform: r.platform, environment: r.environment, appID: r.appID, tokenHash: r.tokenHash,
            tokenHint: r.tokenHint, keyID: r.hash.keyID, secretHash: r.hash.digest, ttlSeconds: r.ttlSeconds, rateMax: r.rateMax,
            rateWindowSeconds: r.rateWindowSeconds, ownerKey: Int(r.ownerKey))
        for row in try await prepare.rows(on: client, logger: logger) {
            switch row.decision {
            case "send": return .send(uncertain: row.uncertain)
            case "refused": return .refused(reason: row.reason ?? "refused")
            case "done":
                guard let state = row.reason.flatMap(PushVerificationState.init(rawValue:)) else { break }
                return .done(state: state)
            case "busy": return .busy
            case "invalid": return .invalid(reason: row.reason ?? "receipt reused")
            default: break
            }
        }
        throw StoreError("herald.push_prepare gave no decision")
    }

    /// The provider accepted: the receipt is `sent`, the token healthy (valid again if it was not).
    public static func sent(_ receipt: String, tokenHash: String, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let last = attempts.last
        try await ReceiptSent(
            receipt: receipt, provider: last?.provider ?? "", providerMessageID: last?.providerMessageID ?? "", httpStatus: last?.httpStatus ?? -1,
            tokenHash: tokenHash, attempts: attempts
        ).rows(on: client, logger: logger)
    }

    /// The token is dead: the receipt `failed` (its secret void), the token `invalid`.
    public static func tokenInvalid(_ receipt: String, tokenHash: String, invalid: InvalidToken, recorded detail: String,
                                    delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let last = attempts.last
        try await ReceiptTokenInvalid(
            receipt: receipt, provider: last?.provider ?? "", httpStatus: last?.httpStatus ?? -1, reason: "token_invalid:\(invalid.reason.rawValue)",
            tokenHash: tokenHash, tokenReason: invalid.reason.rawValue, detail: detail, invalidSince: invalid.since ?? Date(),
            attempts: attempts
        ).rows(on: client, logger: logger)
    }

    /// Refused for good for another reason: the receipt `failed`, its secret void.
    public static func failed(_ receipt: String, reason: String, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let last = attempts.last
        try await ReceiptFailed(
            receipt: receipt, provider: last?.provider ?? "", httpStatus: last?.httpStatus ?? -1, reason: reason, attempts: attempts
        ).rows(on: client, logger: logger)
    }

    /// The job ran out of attempts (`herald.push_exhausted`): the receipt `failed` with `reason`,
    /// its secret void. Runs in the runner's transaction (``PushHandler/exhausted(_:reason:context:)``);
    /// throws when there is nothing of this job to end, so that no `push.failed` is emitted.
    public static func exhausted(_ receipt: String, messageID: String, platform: String, environment: String, appID: String,
                                 tokenHash: String, reason: String, on connection: PostgresConnection, logger: Logger) async throws {
        let exhausted = ReceiptExhausted(receipt: receipt, messageID: messageID, platform: platform, environment: environment, appID: appID,
                                         tokenHash: tokenHash, reason: reason)
        for row in try await exhausted.rows(on: connection, logger: logger) where row.ended { return }
        throw StoreError("receipt \(receipt) was decided meanwhile or is being pushed: left as it is")
    }

    /// Try again later with a fresh secret (the old one is void). A call that timed out may
    /// have delivered the push all the same (counted in `uncertain_sends`).
    public static func retrying(_ receipt: String, reason: String, delivery attempts: [DeliveryAttempt], client: PostgresClient, logger: Logger) async throws {
        let last = attempts.last
        try await ReceiptRetrying(
            receipt: receipt, provider: last?.provider ?? "", httpStatus: last?.httpStatus ?? -1, reason: reason, uncertainSends: attempts.uncertainSends,
            attempts: attempts
        ).rows(on: client, logger: logger)
    }
}

extension AttemptLog {
    /// `herald.push_send_attempts`: every provider call of a receipt (`heraldctl verify show-push` prints them).
    public static let push = AttemptLog { PushAttemptsRead(key: $0) }
}

extension PushAttemptsRead.Row: DeliveryAttemptRow {}
