import Foundation
import HeraldRuntime
import HeraldWire
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
    public static func hashContext(phone: String, purpose: String, tenant: String) -> String {
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
            guard let code = try await CodeCheckLock(verificationID: verificationID).first(on: connection, logger: logger) else { return .notFound }
            switch code.status {
            case .verified: return .alreadyUsed
            case .dead: return .tooManyAttempts
            case .expired: return .expired
            case .pending: break
            case .failed: return .notFound
            }
            if code.expired {
                try await CodeExpire(codeID: code.id).rows(on: connection, logger: logger)
                return .expired
            }
            // Read after the code's lock is held: checks of one code run one after another.
            if let lock = try await GuessLockout(phoneNumber: code.phoneNumber).first(on: connection, logger: logger) {
                return .lockedOut(retryAfterSeconds: max(1, lock.seconds))
            }
            let stored = StoredSecretHash(keyID: code.keyID, digest: code.digest)
            if hasher.verify(secret, context: Self.hashContext(phone: code.phoneNumber, purpose: code.purpose, tenant: code.tenant), against: stored) {
                try await CodeVerified(codeID: code.id).rows(on: connection, logger: logger)
                // A number that verified is known: the fraud guard never refuses it (KnownNumbers).
                try await KnownNumbers.verified(code.phoneNumber, hasher: hasher, on: connection, logger: logger)
                return .verified(phoneNumber: code.phoneNumber, purpose: SMSVerificationJob.Purpose(rawValue: code.purpose) ?? .signIn)
            }
            guard let failed = try await GuessFailed(codeID: code.id).first(on: connection, logger: logger) else {
                throw StoreError("herald.sms_guess_failed gave no answer")
            }
            if let lockSeconds = failed.lockSeconds {
                metrics.lockout()
                return .lockedOut(retryAfterSeconds: max(1, lockSeconds))
            }
            return .wrongCode(attemptsLeft: failed.attemptsLeft)
        }
    }

    /// Voids the code `verificationID` carried if it is still pending: its verification was
    /// canceled, or approved another way (Twilio Verify's update), so the code must not verify later.
    public func void(verificationID: String, logger: Logger) async throws {
        try await CodeVoid(verificationID: verificationID).rows(on: client, logger: logger)
    }

    /// Which of `verificationIDs` carry a code (their SMS was not refused): every send of one
    /// number and purpose shares its one pending code, so any of them judges it.
    public func codeCarriers(_ verificationIDs: [String], logger: Logger) async throws -> Set<String> {
        Set(try await CodeCarriers(verificationIDs: verificationIDs).rows(on: client, logger: logger).map(\.verificationID))
    }

    /// Of `verificationIDs`, those herald-sms ended without sending: every provider failed, or
    /// it refused them (a limit, the number's policy, a pause). Not yet handled is not among them.
    public func undelivered(_ verificationIDs: [String], logger: Logger) async throws -> Set<String> {
        Set(try await VerificationsUndelivered(verificationIDs: verificationIDs).rows(on: client, logger: logger).map(\.verificationID))
    }
}
