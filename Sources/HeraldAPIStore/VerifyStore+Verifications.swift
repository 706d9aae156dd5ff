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
            try await connection.query("""
                UPDATE herald.verify_verifications SET status = 'expired', updated_at = now()
                 WHERE service_sid = \(service.sid) AND to_number = \(to) AND status = 'pending' AND expires_at <= now()
                """, logger: logger)
            // A concurrent start for the same number waits at the insert for the other's commit, then
            // finds its row. That row may have stopped being pending in the meantime (a check
            // approved it, a refused send failed it): then the insert is tried again, and goes in.
            var pending: (String, Int)?
            for _ in 0..<3 where pending == nil {
                let fresh = "VE" + RandomID.hex()
                try await connection.query("""
                    INSERT INTO herald.verify_verifications (sid, service_sid, to_number, channel, locale, status, expires_at)
                    VALUES (\(fresh), \(service.sid), \(to), \(channel), \(locale), 'pending', now() + make_interval(secs => \(service.ttlSeconds)))
                    ON CONFLICT (service_sid, to_number) WHERE status = 'pending' DO NOTHING
                    """, logger: logger)
                let rows = try await connection.query("""
                    SELECT v.sid, (SELECT count(*)::int FROM herald.verify_send_attempts a WHERE a.verification_sid = v.sid)
                      FROM herald.verify_verifications v
                     WHERE v.service_sid = \(service.sid) AND v.to_number = \(to) AND v.status = 'pending'
                       FOR UPDATE OF v
                    """, logger: logger)
                for try await row in rows.decode((String, Int).self) { pending = row }
            }
            guard let (sid, sends) = pending else { throw StoreError("no pending verification after insert") }
            if sends >= service.maxSendAttempts {
                guard let current = try await Self.read(connection, service: service.sid, sid: sid, logger: logger) else { throw StoreError("verification vanished") }
                return .maxSendAttempts(current)
            }
            let attempt = VerifyVerification.SendAttempt(sid: attemptSid, channel: channel, time: Date())
            try await connection.query("""
                INSERT INTO herald.verify_send_attempts (verification_sid, attempt, attempt_sid, channel)
                VALUES (\(sid), \(sends + 1), \(attempt.sid), \(channel))
                """, logger: logger)
            try await connection.query("""
                UPDATE herald.verify_verifications
                   SET channel = \(channel), locale = coalesce(\(locale), locale), updated_at = now(),
                       expires_at = now() + make_interval(secs => \(service.ttlSeconds))
                 WHERE sid = \(sid)
                """, logger: logger)
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
            let rows = try await connection.query("""
                DELETE FROM herald.verify_send_attempts WHERE attempt_sid = \(attemptSid) RETURNING verification_sid
                """, logger: logger)
            var withdrawn: [String] = []
            for try await sid in rows.decode(String.self) { withdrawn.append(sid) }
            for sid in withdrawn {
                try await connection.query("""
                    UPDATE herald.verify_verifications v
                       SET channel = last.channel, expires_at = last.created_at + make_interval(secs => \(service.ttlSeconds)), updated_at = now()
                      FROM (SELECT channel, created_at FROM herald.verify_send_attempts WHERE verification_sid = \(sid)
                             ORDER BY attempt DESC LIMIT 1) last
                     WHERE v.sid = \(sid) AND v.status = 'pending'
                    """, logger: logger)
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
            let rows = try await connection.query("""
                UPDATE herald.verify_verifications SET status = \(status.rawValue), updated_at = now()
                 WHERE service_sid = \(service) AND sid = \(sid) AND status = 'pending' RETURNING sid
                """, logger: logger)
            for try await _ in rows.decode(String.self) { return try await Self.read(connection, service: service, sid: sid, logger: logger) }
            return nil
        }
    }

    /// Records the result of a check on `sid`: its new status (the check already counted).
    public func settleCheck(service: String, sid: String, status: VerifyVerification.Status, logger: Logger) async throws -> VerifyVerification? {
        try await client.withConnection { connection in
            try await connection.query("""
                UPDATE herald.verify_verifications SET status = \(status.rawValue), updated_at = now()
                 WHERE service_sid = \(service) AND sid = \(sid) AND status = 'pending'
                """, logger: logger)
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
            let (column, value) = target.column
            var binds = PostgresBindings()
            binds.append(service.sid)
            binds.append(value)
            binds.append(service.maxCheckAttempts)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                WITH open AS (
                    SELECT sid, checks FROM herald.verify_verifications WHERE service_sid = $1 AND \(column) = $2 AND status = 'pending' FOR UPDATE)
                UPDATE herald.verify_verifications v
                   SET checks = CASE WHEN open.checks < $3 THEN open.checks + 1 ELSE open.checks END,
                       status = CASE WHEN open.checks < $3 THEN 'pending' ELSE 'max_attempts_reached' END, updated_at = now()
                  FROM open WHERE v.sid = open.sid
                RETURNING v.sid, open.checks < $3
                """, binds: binds), logger: logger)
            for try await (sid, counted) in rows.decode((String, Bool).self) {
                guard let verification = try await Self.read(connection, service: service.sid, sid: sid, logger: logger) else { return .notFound }
                return counted ? .claimed(verification) : .exhausted(verification)
            }
            // Twilio: a check after the last allowed one answers 60202 while the verification
            // would still be valid, not 20404.
            var lookup = PostgresBindings()
            lookup.append(service.sid)
            lookup.append(value)
            let spent = try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT sid FROM herald.verify_verifications
                 WHERE service_sid = $1 AND \(column) = $2 AND status = 'max_attempts_reached' AND expires_at > now()
                 ORDER BY updated_at DESC LIMIT 1
                """, binds: lookup), logger: logger)
            for try await sid in spent.decode(String.self) {
                if let verification = try await Self.read(connection, service: service.sid, sid: sid, logger: logger) { return .exhausted(verification) }
            }
            return .notFound
        }
    }

    private static func expire(_ connection: PostgresConnection, service: String, condition: Target, logger: Logger) async throws {
        let (column, value) = condition.column
        var binds = PostgresBindings()
        binds.append(service)
        binds.append(value)
        try await connection.query(PostgresQuery(unsafeSQL: """
            UPDATE herald.verify_verifications SET status = 'expired', updated_at = expires_at
             WHERE service_sid = $1 AND \(column) = $2 AND status = 'pending' AND expires_at <= now()
            """, binds: binds), logger: logger)
    }

    static func read(_ connection: PostgresConnection, service: String, sid: String, logger: Logger) async throws -> VerifyVerification? {
        let rows = try await connection.query("""
            SELECT sid, service_sid, to_number, channel, locale, status, checks, created_at, updated_at, expires_at
              FROM herald.verify_verifications WHERE service_sid = \(service) AND sid = \(sid)
            """, logger: logger)
        var found: VerifyVerification?
        for try await r in rows.decode((String, String, String, String, String?, String, Int, Date, Date, Date).self) {
            found = VerifyVerification(sid: r.0, serviceSid: r.1, to: r.2, channel: r.3, locale: r.4, status: .init(rawValue: r.5) ?? .failed,
                                       checks: r.6, createdAt: r.7, updatedAt: r.8, expiresAt: r.9, sendAttempts: [])
        }
        guard var verification = found else { return nil }
        let attempts = try await connection.query("""
            SELECT attempt_sid, channel, created_at FROM herald.verify_send_attempts WHERE verification_sid = \(sid) ORDER BY attempt
            """, logger: logger)
        for try await (attemptSid, channel, time) in attempts.decode((String, String, Date).self) {
            verification.sendAttempts.append(.init(sid: attemptSid, channel: channel, time: time))
        }
        return verification
    }
}

extension VerifyStore.Target {
    var column: (String, String) {
        switch self {
        case .sid(let sid): ("sid", sid)
        case .to(let to): ("to_number", to)
        }
    }
}
