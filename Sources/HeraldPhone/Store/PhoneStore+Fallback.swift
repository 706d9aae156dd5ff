import Foundation
import HeraldRuntime
import HeraldWire
import Logging
import NIOCore
import PostgresNIO

extension PhoneStore {
    /// What `herald.sms_fallback_take` decided for a `sms.fallback` job (functions/sms_fallback_take.sql).
    public enum FallbackDecision: Sendable, Equatable {
        /// Send the sealed code on `channels[step]` (and on, if that one's providers fail).
        case send(Fallback, uncertain: Bool)
        case busy
        case early
        case done(state: String?)
        case gone
        /// `uncertain`: a retry ended a step its stopped worker may have sent (counted as such).
        case closed(reason: String, uncertain: Bool)
        case delivered(uncertain: Bool)
        case refused(reason: String)
    }

    /// A verification's fallback as stored: its channel list, the job it was sent for, its sealed code.
    public struct Fallback: Sendable, Equatable {
        public var channels: [SMSVerificationJob.Channel]
        public var job: SMSVerificationJob
        public var code: SealedSecret
    }

    /// How a verification's channel `step` was sent, for `herald.sms_fallback_arm` in the send's transaction.
    public struct Arm: Sendable {
        public var channels: [SMSVerificationJob.Channel]
        public var step: Int
        /// The job and its sealed code: on the first channel's send only (the row is made then).
        public var job: SMSVerificationJob?
        public var code: SealedSecret?
        /// `sms.fallback.after_seconds` of the channel sent, 0 for none.
        public var waitSeconds: Int
        /// The jobs exchange, and the wait queue's routing key there.
        public var exchange: String
        public var routingKey: String?
    }

    /// Decides a `sms.fallback` job. `paused`: the fraud guard's refusal of its send, judged just
    /// before (nil: none); `maxPaidSends`: `sms.fallback.max_paid_sends`.
    public static func takeFallback(_ job: SMSFallbackJob, messageID: String, ownerKey: Int64, limits: Limits, paused: String?, maxPaidSends: Int,
                                    client: PostgresClient, logger: Logger) async throws -> FallbackDecision {
        try await Database.retryingConflicts {
            let take = FallbackTake(verificationID: job.verificationID, step: job.step, reason: job.reason.rawValue, messageID: messageID,
                                    ownerKey: Int(ownerKey), scopes: limits.scopes, keys: limits.keys, windows: limits.windows, maxes: limits.maxes,
                                    paused: paused, maxPaidSends: maxPaidSends)
            guard let row = try await take.first(on: client, logger: logger) else { throw StoreError("herald.sms_fallback_take gave no decision") }
            switch row.decision {
            case "send":
                guard let channels = row.channels, let body = row.job, let keyID = row.keyID, let nonce = row.nonce, let ciphertext = row.ciphertext,
                      let tag = row.tag else { throw StoreError("a fallback row without its code") }
                let list = try channels.map { name in
                    guard let channel = SMSVerificationJob.Channel(rawValue: name) else { throw StoreError("unknown channel in a fallback row") }
                    return channel
                }
                let verification = try JSONDecoder().decode(SMSVerificationJob.self, from: Data(body.utf8))
                return .send(Fallback(channels: list, job: verification, code: SealedSecret(
                    keyID: keyID, nonce: nonce, ciphertext: ciphertext, tag: tag)), uncertain: row.uncertain)
            case "busy": return .busy
            case "early": return .early
            case "done": return .done(state: row.reason)
            case "gone": return .gone
            case "closed": return .closed(reason: row.reason ?? "closed", uncertain: row.uncertain)
            case "delivered": return .delivered(uncertain: row.uncertain)
            case "refused": return .refused(reason: row.reason ?? "refused")
            default: throw StoreError("herald.sms_fallback_take gave '\(row.decision)'")
            }
        }
    }

    /// What `herald.sms_fallback_continue` decided: may the next channel go out at once, in the
    /// `sms.fallback` job that holds the step, after the channel it sent on refused the code or was down.
    public enum Continuation: Sendable, Equatable {
        case send
        case delivered
        case closed(reason: String)
        case refused(reason: String)
        /// The job no longer holds the step (the verification's state).
        case done(state: String?)
    }

    /// Asks the one judgment of every step (functions/sms_fallback_judge.sql) for the next channel
    /// of the `sms.fallback` job `messageID`, which this worker (`ownerKey`) holds the verification's
    /// step for. `uncertainSends`: the job's calls that may have reached a provider (1 or 0);
    /// `paused`: the fraud guard's refusal, judged just before (nil: none); `maxPaidSends`:
    /// `sms.fallback.max_paid_sends`.
    public static func continueFallback(_ verificationID: String, messageID: String, ownerKey: Int64, uncertainSends: Int, paused: String?,
                                        maxPaidSends: Int, client: PostgresClient, logger: Logger) async throws -> Continuation {
        try await Database.retryingConflicts {
            let judged = FallbackContinue(verificationID: verificationID, messageID: messageID, ownerKey: Int(ownerKey), uncertainSends: uncertainSends,
                                          paused: paused, maxPaidSends: maxPaidSends)
            guard let row = try await judged.first(on: client, logger: logger) else { throw StoreError("herald.sms_fallback_continue gave no decision") }
            switch row.decision {
            case "send": return .send
            case "delivered": return .delivered
            case "closed": return .closed(reason: row.reason ?? "closed")
            case "refused": return .refused(reason: row.reason ?? "refused")
            case "done": return .done(state: row.reason)
            default: throw StoreError("herald.sms_fallback_continue gave '\(row.decision)'")
            }
        }
    }

    /// A send that has a fallback: `sent` and the fallback's next step, in one transaction (a
    /// worker stopped between them would skip the next channel); the step only when the send's
    /// record applied. `fallbackJob`: the `sms.fallback` job's message id when it sent, nil for the
    /// verification's own job.
    public static func sent(_ sent: Sent, arm: Arm, fallbackJob: String?, client: PostgresClient, logger: Logger) async throws {
        let job = try arm.job.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await client.withTransaction(logger: logger) { connection in
            let recorded: Int
            if let fallbackJob {
                let accepted = sent.attempts.last
                let record = FallbackRecord(verificationID: sent.verificationID, messageID: fallbackJob, result: "sent", provider: accepted?.provider ?? "",
                                            providerMessageID: accepted?.providerMessageID ?? "", channel: sent.channel, reason: nil,
                                            uncertainSends: sent.attempts.uncertainSends, attempts: sent.attempts)
                recorded = try await record.first(on: connection, logger: logger)?.recorded ?? 0
            } else {
                recorded = try await sentStatement([sent]).first(on: connection, logger: logger)?.sent ?? 0
            }
            guard recorded > 0 else { return }
            try await FallbackArm(verificationID: sent.verificationID, channels: arm.channels.map(\.rawValue), step: arm.step, job: job,
                                  keyID: arm.code?.keyID, nonce: arm.code?.nonce, ciphertext: arm.code?.ciphertext, tag: arm.code?.tag,
                                  waitSeconds: arm.waitSeconds, exchange: arm.exchange, routingKey: arm.routingKey).rows(on: connection, logger: logger)
        }
    }

    /// A `sms.fallback` job whose channels' providers all failed for now: retried through the
    /// delay queues (its take then finds it its own), the calls recorded.
    public static func fallbackRetrying(_ verificationID: String, messageID: String, reason: String, attempts: [DeliveryAttempt],
                                        client: PostgresClient, logger: Logger) async throws {
        try await FallbackRecord(verificationID: verificationID, messageID: messageID, result: "retrying", provider: nil, providerMessageID: nil,
                                 channel: nil, reason: reason, uncertainSends: attempts.uncertainSends, attempts: attempts).rows(on: client, logger: logger)
    }

    /// A `sms.fallback` job whose channels all refused, or whose next channel was not wanted: the
    /// fallback ends, the verification (still `sent`: the earlier send stands) keeps `reason` (nil:
    /// none), the calls recorded.
    public static func fallbackFailed(_ verificationID: String, messageID: String, reason: String?, attempts: [DeliveryAttempt],
                                      client: PostgresClient, logger: Logger) async throws {
        try await FallbackFailed(verificationID: verificationID, messageID: messageID, reason: reason, attempts: attempts).rows(on: client, logger: logger)
    }

    /// A `sms.fallback` job out of attempts (in the runner's transaction): as ``fallbackFailed``, no
    /// calls to record, and not while a live worker sends it.
    public static func fallbackExhausted(_ verificationID: String, messageID: String, reason: String, checkOwner: Bool = true,
                                         on connection: PostgresConnection, logger: Logger) async throws {
        try await FallbackEnd(verificationID: verificationID, messageID: messageID, reason: reason, checkOwner: checkOwner).rows(on: connection, logger: logger)
    }

    /// The `sms.fallback` job of an undelivered receipt (in the receipt job's transaction): the
    /// verification's next channel at once, if it has one and the receipt is its current send's.
    public static func fallbackOnUndelivered(_ verificationID: String, providerMessageID: String, exchange: String,
                                             on connection: PostgresConnection, logger: Logger) async throws {
        try await FallbackUndelivered(verificationID: verificationID, providerMessageID: providerMessageID, exchange: exchange)
            .rows(on: connection, logger: logger)
    }
}
