import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

extension VerifyStore {
    public enum StartOutcome: Sendable, Equatable {
        /// Recorded and published: a new verification (attempt 1) or a resend of the pending one.
        case started(VerifyVerification, resend: Bool)
        /// The pending verification has had its `max_send_attempts` sends (Twilio 60203).
        case maxSendAttempts(VerifyVerification)
    }

    /// Starts a verification of `to` in `service`, or resends the pending one (Twilio: a second
    /// send to the same To while pending is the same verification), its send attempt named
    /// `attemptSid`. `enqueue` writes the attempt's job to the transactional outbox on the
    /// connection it is given, in the transaction that records the attempt: the job is published
    /// after the commit, and never if the attempt is not recorded.
    public func start(service: VerifyService, to: String, channel: String, locale: String?, attemptSid: String, logger: Logger,
                      enqueue: @escaping @Sendable (PostgresConnection, VerifyVerification.SendAttempt, _ resend: Bool) async throws -> Void) async throws -> StartOutcome {
        try await client.withTransaction(logger: logger) { connection in
            try await VerificationStartExpire(serviceSid: service.sid, to: to).rows(on: connection, logger: logger)
            // A concurrent start for the same number waits at the insert for the other's commit, then
            // finds its row. That row may have stopped being pending in the meantime (a check
            // approved it, a refused send failed it): then the insert is tried again, and goes in.
            var pending: VerificationPendingLock.Row?
            for _ in 0..<3 where pending == nil {
                let fresh = "VE" + RandomID.hex()
                try await VerificationInsert(sid: fresh, serviceSid: service.sid, to: to, channel: channel, locale: locale, ttlSeconds: service.ttlSeconds)
                    .rows(on: connection, logger: logger)
                pending = try await VerificationPendingLock(serviceSid: service.sid, to: to).rows(on: connection, logger: logger).last
            }
            guard let pending else { throw StoreError("no pending verification after insert") }
            let (sid, sends) = (pending.sid, pending.sends)
            if sends >= service.maxSendAttempts {
                guard let current = try await Self.read(connection, service: service.sid, sid: sid, logger: logger) else { throw StoreError("verification vanished") }
                return .maxSendAttempts(current)
            }
            let attempt = VerifyVerification.SendAttempt(sid: attemptSid, channel: channel, time: Date())
            try await SendAttemptInsert(verificationSid: sid, attempt: sends + 1, attemptSid: attempt.sid, channel: channel).rows(on: connection, logger: logger)
            try await VerificationSent(sid: sid, channel: channel, locale: locale, ttlSeconds: service.ttlSeconds).rows(on: connection, logger: logger)
            try await enqueue(connection, attempt, sends > 0)
            guard let current = try await Self.read(connection, service: service.sid, sid: sid, logger: logger) else { throw StoreError("verification vanished") }
            return .started(current, resend: sends > 0)
        }
    }

    /// Takes back a send attempt its worker refused (a resend past a limit): it sent nothing, so
    /// it is not listed and does not count toward `max_send_attempts`, and the verification's
    /// channel and validity are again those of the last send that stands.
    public func withdraw(attemptSid: String, service: VerifyService, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            for withdrawn in try await SendAttemptWithdraw(attemptSid: attemptSid).rows(on: connection, logger: logger) {
                try await VerificationRewind(sid: withdrawn.verificationSid, ttlSeconds: service.ttlSeconds).rows(on: connection, logger: logger)
            }
        }
    }

    /// The verification `sid` of `service` (a pending one past its time reads, and is from now on, `expired`).
    public func verification(service: String, sid: String, logger: Logger) async throws -> VerifyVerification? {
        try await client.withConnection { connection in
            try await Self.expire(connection, service: service, condition: .sid(sid), logger: logger)
            return try await Self.read(connection, service: service, sid: sid, logger: logger)
        }
    }

    /// Moves a pending verification to `status` (Twilio's update: `canceled` or `approved`; `failed`
    /// when none of its sends was sent).
    /// Nil when there is no pending verification `sid` in `service`.
    public func finish(service: String, sid: String, as status: VerifyVerification.Status, logger: Logger) async throws -> VerifyVerification? {
        try await client.withConnection { connection in
            try await Self.expire(connection, service: service, condition: .sid(sid), logger: logger)
            guard try await VerificationFinish(status: status, serviceSid: service, sid: sid).first(on: connection, logger: logger) != nil else { return nil }
            return try await Self.read(connection, service: service, sid: sid, logger: logger)
        }
    }

    /// Records the result of a check on `sid`: its new status (the check already counted).
    public func settleCheck(service: String, sid: String, status: VerifyVerification.Status, logger: Logger) async throws -> VerifyVerification? {
        try await client.withConnection { connection in
            try await VerificationFinish(status: status, serviceSid: service, sid: sid).rows(on: connection, logger: logger)
            return try await Self.read(connection, service: service, sid: sid, logger: logger)
        }
    }

    public enum Target: Sendable, Equatable {
        case sid(String)
        case to(String)
    }

    public enum CheckClaim: Sendable, Equatable {
        /// The check is counted (`checks` includes it): judge its code (through the last send that carries it).
        case claimed(VerifyVerification)
        /// It has had its `max_check_attempts` checks: now `max_attempts_reached` (Twilio 60202).
        case exhausted(VerifyVerification)
        /// No pending verification (approved, canceled, expired or never made: Twilio 20404).
        case notFound
    }

    /// Counts one check against the pending verification `target` of `service`, unless it has
    /// had all of its checks. Atomic: of concurrent checks, never more than the maximum count.
    public func claimCheck(service: VerifyService, target: Target, logger: Logger) async throws -> CheckClaim {
        try await client.withConnection { connection in
            try await Self.expire(connection, service: service.sid, condition: target, logger: logger)
            let claim: (sid: String, counted: Bool)? = switch target {
            case .sid(let sid):
                try await CheckClaimBySid(serviceSid: service.sid, sid: sid, maxChecks: service.maxCheckAttempts).first(on: connection, logger: logger)
                    .map { ($0.sid, $0.counted) }
            case .to(let to):
                try await CheckClaimByTo(serviceSid: service.sid, to: to, maxChecks: service.maxCheckAttempts).first(on: connection, logger: logger)
                    .map { ($0.sid, $0.counted) }
            }
            if let claim {
                guard let verification = try await Self.read(connection, service: service.sid, sid: claim.sid, logger: logger) else { return .notFound }
                return claim.counted ? .claimed(verification) : .exhausted(verification)
            }
            // Twilio: a check after the last allowed one answers 60202 while the verification
            // would still be valid, not 20404.
            let spent = switch target {
            case .sid(let sid): try await CheckSpentBySid(serviceSid: service.sid, sid: sid).first(on: connection, logger: logger)?.sid
            case .to(let to): try await CheckSpentByTo(serviceSid: service.sid, to: to).first(on: connection, logger: logger)?.sid
            }
            if let spent, let verification = try await Self.read(connection, service: service.sid, sid: spent, logger: logger) {
                return .exhausted(verification)
            }
            return .notFound
        }
    }

    private static func expire(_ connection: PostgresConnection, service: String, condition: Target, logger: Logger) async throws {
        switch condition {
        case .sid(let sid): try await VerificationExpireBySid(serviceSid: service, sid: sid).rows(on: connection, logger: logger)
        case .to(let to): try await VerificationExpireByTo(serviceSid: service, to: to).rows(on: connection, logger: logger)
        }
    }

    static func read(_ connection: PostgresConnection, service: String, sid: String, logger: Logger) async throws -> VerifyVerification? {
        guard let r = try await VerificationRead(serviceSid: service, sid: sid).first(on: connection, logger: logger) else { return nil }
        let attempts = try await SendAttemptsList(verificationSid: sid).rows(on: connection, logger: logger)
        return VerifyVerification(sid: r.sid, serviceSid: r.serviceSid, to: r.to, channel: r.channel, locale: r.locale, status: r.status,
                                  checks: r.checks, createdAt: r.createdAt, updatedAt: r.updatedAt, expiresAt: r.expiresAt,
                                  sendAttempts: attempts.map { .init(sid: $0.attemptSid, channel: $0.channel, time: $0.createdAt) })
    }
}
