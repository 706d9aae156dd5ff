import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The check API of phone verification: is `code` the code sent for `verificationID`?
/// Atomic (the code's row is locked while it is judged: of 100 concurrent checks of the
/// right code exactly one succeeds), constant time in the code, single use, and a code
/// dies after `max_attempts` wrong tries. Wrong tries also count per number, across codes and
/// purposes (`herald.sms_guess_failed`): past `sms.guessing.max_failures` the number is locked out.
public struct PhoneVerifier: Sendable {
    public enum Result: Sendable, Equatable {
        case verified(phoneNumber: String, purpose: SMSVerificationJob.Purpose)
        /// Wrong; `attemptsLeft` more tries (0: the code is now dead).
        case wrongCode(attemptsLeft: Int)
        case expired
        case tooManyAttempts
        /// The code was already used (by this or another verification id sharing it).
        case alreadyUsed
        /// No such verification, or it was refused or never delivered.
        case notFound
        /// Too many wrong codes for this number, across codes and purposes (`sms.guessing.*`):
        /// no code is checked (nor sent) for `retryAfterSeconds`. The wrong code that reaches the
        /// threshold answers this too. The code itself is untouched.
        case lockedOut(retryAfterSeconds: Int)
    }

    public let client: PostgresClient
    public let hasher: SecretHasher
    let metrics = SMSMetrics()

    public init(client: PostgresClient, hasher: SecretHasher) {
        self.client = client
        self.hasher = hasher
    }

    /// What a code's hash is bound to: the same code for another number, purpose or tenant is
    /// worthless. A code of no tenant keeps the context codes had before tenants.
    static func hashContext(phone: String, purpose: String, tenant: String) -> String {
        tenant.isEmpty ? "sms:\(phone):\(purpose)" : "sms:\(phone):\(purpose):\(tenant)"
    }

    public func verify(verificationID: String, code: String, logger: Logger) async throws -> Result {
        let result = try await check(verificationID: verificationID, code: code, logger: logger)
        if case .verified(let phone, _) = result {
            // Test numbers may be fictional: counted under ZZ.
            metrics.verified(region: PhoneNumberClassifier.metricRegion(of: phone))
        }
        return result
    }

    private func check(verificationID: String, code: String, logger: Logger) async throws -> Result {
        let secret = Secret(code)
        return try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query("""
                SELECT c.id, c.status, c.key_id, c.code_hash, c.attempts, c.max_attempts, c.expires_at <= now(), c.phone_number, c.purpose, c.tenant
                  FROM herald.sms_verifications v JOIN herald.sms_codes c ON c.id = v.code_id
                 WHERE v.verification_id = \(verificationID)
                   FOR UPDATE OF c
                """, logger: logger)
            var found: (Int64, SMSCodeStatus, String, ByteBuffer, Int, Int, Bool, String, String, String)?
            for try await row in rows.decode((Int64, SMSCodeStatus, String, ByteBuffer, Int, Int, Bool, String, String, String).self) { found = row }
            guard let (id, status, keyID, digest, _, _, isExpired, phone, purposeText, tenant) = found else { return .notFound }
            switch status {
            case .verified: return .alreadyUsed
            case .dead: return .tooManyAttempts
            case .expired: return .expired
            case .pending: break
            case .failed: return .notFound
            }
            if isExpired {
                try await connection.query("UPDATE herald.sms_codes SET status = \(SMSCodeStatus.expired), finished_at = now() WHERE id = \(id)", logger: logger)
                return .expired
            }
            // Read after the code's lock is held: checks of one code run one after another.
            let locks = try await connection.query("""
                SELECT ceil(extract(epoch FROM locked_until - now()))::int FROM herald.sms_guess_failures
                 WHERE phone_number = \(phone) AND locked_until > now()
                """, logger: logger)
            for try await seconds in locks.decode(Int.self) { return .lockedOut(retryAfterSeconds: max(1, seconds)) }
            let stored = StoredSecretHash(keyID: keyID, digest: Array(buffer: digest))
            if hasher.verify(secret, context: Self.hashContext(phone: phone, purpose: purposeText, tenant: tenant), against: stored) {
                // A success forgets the number's wrong tries (of every purpose: they count together).
                try await connection.query("""
                    WITH used AS (
                        UPDATE herald.sms_codes SET status = \(SMSCodeStatus.verified), finished_at = now() WHERE id = \(id)
                        RETURNING phone_number, purpose)
                    DELETE FROM herald.sms_guess_failures g USING used WHERE g.phone_number = used.phone_number
                    """, logger: logger)
                // A number that verified is known: the fraud guard never refuses it (KnownNumbers).
                try await KnownNumbers.verified(phone, hasher: hasher, on: connection, logger: logger)
                return .verified(phoneNumber: phone, purpose: SMSVerificationJob.Purpose(rawValue: purposeText) ?? .signIn)
            }
            let failed = try await connection.query("""
                SELECT o_attempts_left, ceil(extract(epoch FROM o_locked_until - now()))::int FROM herald.sms_guess_failed(\(id))
                """, logger: logger)
            for try await (left, lockSeconds) in failed.decode((Int, Int?).self) {
                if let lockSeconds {
                    metrics.lockout()
                    return .lockedOut(retryAfterSeconds: max(1, lockSeconds))
                }
                return .wrongCode(attemptsLeft: left)
            }
            throw StoreError("herald.sms_guess_failed gave no answer")
        }
    }

    /// Voids the code `verificationID` carried if it is still pending: its verification was
    /// canceled, or approved another way (Twilio Verify's update), so the code must not verify later.
    public func void(verificationID: String, logger: Logger) async throws {
        try await client.query("""
            UPDATE herald.sms_codes c SET status = \(SMSCodeStatus.expired), finished_at = now()
              FROM herald.sms_verifications v
             WHERE v.verification_id = \(verificationID) AND c.id = v.code_id AND c.status = \(SMSCodeStatus.pending)
            """, logger: logger)
    }

    /// Which of `verificationIDs` carry a code (their SMS was not refused): every send of one
    /// number and purpose shares its one pending code, so any of them judges it.
    public func codeCarriers(_ verificationIDs: [String], logger: Logger) async throws -> Set<String> {
        let rows = try await client.query("""
            SELECT verification_id FROM herald.sms_verifications WHERE verification_id = ANY(\(verificationIDs)) AND code_id IS NOT NULL
            """, logger: logger)
        var carriers = Set<String>()
        for try await id in rows.decode(String.self) { carriers.insert(id) }
        return carriers
    }

    /// Of `verificationIDs`, those herald-sms ended without sending: every provider failed, or
    /// it refused them (a limit, the number's policy, a pause). Not yet handled is not among them.
    public func undelivered(_ verificationIDs: [String], logger: Logger) async throws -> Set<String> {
        let rows = try await client.query("""
            SELECT verification_id FROM herald.sms_verifications WHERE verification_id = ANY(\(verificationIDs)) AND state IN ('failed', 'refused')
            """, logger: logger)
        var ended = Set<String>()
        for try await id in rows.decode(String.self) { ended.insert(id) }
        return ended
    }
}
