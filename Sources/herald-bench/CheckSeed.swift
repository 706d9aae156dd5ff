import Foundation
import HeraldPhone
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// The SMS verifications the check runs ask about, written set-based as `herald.sms_prepare_batch`
/// leaves a sent one: a pending code (its keyed hash under the active HMAC key, bound to its
/// number and purpose, `sms.max_attempts` and `sms.guessing.*` of the configuration, one hour to
/// live) and its verification `sent`, ids `<prefix>-0` … `<prefix>-<count - 1>`, each on its own
/// `+4916…` number (purpose `mfa_sign_in`), so no number's wrong tries (counted per number,
/// across purposes) reach a lockout. A number that a pending code of an earlier run still
/// holds is skipped (the ids stay contiguous). Every code carries the same secret, never the
/// `000000` the checks send: each check is a wrong code, judged in full (row locked, lockout
/// read, HMAC compared, `herald.sms_guess_failed`).
struct CheckSeed {
    let client: PostgresClient
    let configuration: HeraldConfiguration
    let logger: Logger
    let prefix: String

    static let purpose = SMSVerificationJob.Purpose.mfaSignIn.rawValue

    /// Writes up to `count` verifications; returns how many there are.
    func write(count: Int) async throws -> Int {
        let hasher = SecretHasher(keyRing: try configuration.secrets.keyRing())
        let stored = hasher.hash(Secret("424242"), context: "sms:+4916000000000:\(Self.purpose)")
        let sms = configuration.sms
        let offset = Int.random(in: 0..<1_000_000_000)
        let rows = try await client.query("""
            WITH code AS (
                INSERT INTO herald.sms_codes (phone_number, purpose, status, key_id, code_hash, max_attempts, test_number, expires_at,
                                              last_sent_at, sends, guess_limit, guess_window_seconds, lockout_seconds, lockout_max_seconds)
                SELECT '+4916' || lpad(((\(offset)::bigint + g * 7919) % 1000000000)::text, 9, '0'), \(Self.purpose), 'pending',
                       \(stored.keyID), \(ByteBuffer(bytes: stored.digest)), \(sms.maxAttempts), false, now() + interval '1 hour',
                       now(), 1, \(sms.guessing.maxFailures), \(sms.guessing.windowSeconds), \(sms.guessing.lockoutSeconds), \(sms.guessing.maxLockoutSeconds)
                  FROM generate_series(0, \(count - 1)) g
                ON CONFLICT (phone_number, purpose, tenant) WHERE status = 'pending' DO NOTHING
                RETURNING id, phone_number, purpose
            ), verification AS (
                INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends)
                SELECT \(prefix) || '-' || (row_number() OVER (ORDER BY id) - 1), id, phone_number, purpose,
                       \(prefix) || '-m' || id, 'sent', 1
                  FROM code
                RETURNING 1
            )
            SELECT count(*)::bigint FROM verification
            """, logger: logger)
        var written = 0
        for try await n in rows.decode(Int.self) { written = n }
        try await client.query("ANALYZE herald.sms_codes", logger: logger)
        try await client.query("ANALYZE herald.sms_verifications", logger: logger)
        return written
    }

    /// What a live database holds besides: a day of wrong tries on `count` other numbers
    /// (`+4918…`, which no other part of the bench uses; one failure each), analyzed. On an empty
    /// `herald.sms_guess_failures` (the bench database's, or a fresh deployment's) each pooled
    /// connection plans `herald.sms_guess_failed`'s lookups as sequential scans (generic plans) and
    /// keeps them while the table grows: the check runs would measure that start, not the service
    /// (docs/benchmarks-journal.md, "What the figures mean").
    static func writeOtherFailures(count: Int, client: PostgresClient, logger: Logger) async throws {
        try await client.query("""
            INSERT INTO herald.sms_guess_failures (phone_number, failures, last_failure_at, expires_at)
            SELECT '+4918' || lpad(g::text, 9, '0'), 1, now() - (g % 86400) * interval '1 second', now() + interval '1 hour'
              FROM generate_series(0, \(count - 1)) g
            ON CONFLICT (phone_number) DO NOTHING
            """, logger: logger)
        try await client.query("ANALYZE herald.sms_guess_failures", logger: logger)
    }

    static func deleteOtherFailures(client: PostgresClient, logger: Logger) async throws {
        try await client.query("DELETE FROM herald.sms_guess_failures WHERE phone_number LIKE '+4918%'", logger: logger)
    }

    /// What the checks did to the codes: wrong tries recorded, codes dead, numbers locked out.
    struct Outcome { var tries: Int; var dead: Int; var lockedOut: Int }

    func outcome(count: Int) async throws -> Outcome {
        let rows = try await client.query("""
            SELECT coalesce(sum(c.attempts), 0)::bigint, count(*) FILTER (WHERE c.status = 'dead')::bigint,
                   count(*) FILTER (WHERE g.locked_until > now())::bigint
              FROM herald.sms_verifications v JOIN herald.sms_codes c ON c.id = v.code_id
              LEFT JOIN herald.sms_guess_failures g ON g.phone_number = c.phone_number
             WHERE v.verification_id IN (SELECT \(prefix) || '-' || g FROM generate_series(0, \(count - 1)) g)
            """, logger: logger)
        for try await (tries, dead, locked) in rows.decode((Int, Int, Int).self) { return Outcome(tries: tries, dead: dead, lockedOut: locked) }
        return Outcome(tries: 0, dead: 0, lockedOut: 0)
    }

    /// Deletes the verifications, their codes and their numbers' wrong-try counters.
    func delete(count: Int) async throws {
        try await client.query("""
            WITH v AS (
                DELETE FROM herald.sms_verifications WHERE verification_id IN (SELECT \(prefix) || '-' || g FROM generate_series(0, \(count - 1)) g)
                RETURNING code_id, phone_number
            ), c AS (
                DELETE FROM herald.sms_codes WHERE id IN (SELECT code_id FROM v)
            )
            DELETE FROM herald.sms_guess_failures g USING v WHERE g.phone_number = v.phone_number
            """, logger: logger)
    }
}
