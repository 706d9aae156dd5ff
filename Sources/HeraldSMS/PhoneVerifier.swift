import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The check API of phone verification: is `code` the code sent for `verificationID`?
/// Atomic (the code's row is locked while it is judged: of 100 concurrent checks of the
/// right code exactly one succeeds), constant time in the code, single use, and a code
/// dies after `max_attempts` wrong tries.
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
    }

    public let client: PostgresClient
    public let hasher: SecretHasher

    public init(client: PostgresClient, hasher: SecretHasher) {
        self.client = client
        self.hasher = hasher
    }

    /// What a code's hash is bound to: the same code for another number or purpose is worthless.
    static func hashContext(phone: String, purpose: String) -> String { "sms:\(phone):\(purpose)" }

    public func verify(verificationID: String, code: String, logger: Logger) async throws -> Result {
        let secret = Secret(code)
        return try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query("""
                SELECT c.id, c.status, c.key_id, c.code_hash, c.attempts, c.max_attempts, c.expires_at <= now(), c.phone_number, c.purpose
                  FROM herald.sms_verifications v JOIN herald.sms_codes c ON c.id = v.code_id
                 WHERE v.verification_id = \(verificationID)
                   FOR UPDATE OF c
                """, logger: logger)
            var found: (Int64, SMSCodeStatus, String, ByteBuffer, Int, Int, Bool, String, String)?
            for try await row in rows.decode((Int64, SMSCodeStatus, String, ByteBuffer, Int, Int, Bool, String, String).self) { found = row }
            guard let (id, status, keyID, digest, attempts, maxAttempts, isExpired, phone, purposeText) = found else { return .notFound }
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
            let stored = StoredSecretHash(keyID: keyID, digest: Array(buffer: digest))
            if hasher.verify(secret, context: Self.hashContext(phone: phone, purpose: purposeText), against: stored) {
                try await connection.query("UPDATE herald.sms_codes SET status = \(SMSCodeStatus.verified), finished_at = now() WHERE id = \(id)", logger: logger)
                return .verified(phoneNumber: phone, purpose: SMSVerificationJob.Purpose(rawValue: purposeText) ?? .signIn)
            }
            let used = attempts + 1
            if used >= maxAttempts {
                try await connection.query("""
                    UPDATE herald.sms_codes SET attempts = \(used), status = \(SMSCodeStatus.dead), finished_at = now() WHERE id = \(id)
                    """, logger: logger)
                return .wrongCode(attemptsLeft: 0)
            }
            try await connection.query("UPDATE herald.sms_codes SET attempts = \(used) WHERE id = \(id)", logger: logger)
            return .wrongCode(attemptsLeft: maxAttempts - used)
        }
    }
}
