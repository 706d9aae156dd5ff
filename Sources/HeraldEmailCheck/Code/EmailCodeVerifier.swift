import Foundation
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// The check API of one-time email codes: is `code` the code mailed to `email` for `purpose`?
/// As ``PhoneVerifier`` checks SMS codes: atomic (the code's row is locked while it is judged:
/// of concurrent checks of the right code exactly one succeeds), constant time in the code
/// (``SecretHasher/verify(_:context:against:)``), single use, expiry, a code dies after
/// `email.code.max_attempts` wrong tries, and wrong tries count per address across codes and
/// purposes (`herald.email_otp_guess_failed`): past `email.code.guessing.max_failures` the
/// address is locked out, and while it is no code is checked, the right one included.
public struct EmailCodeVerifier: Sendable {
    public enum Result: Sendable, Equatable {
        case verified(email: String, purpose: EmailCodeJob.Purpose)
        /// Wrong; `attemptsLeft` more tries (0: the code is now dead).
        case wrongCode(attemptsLeft: Int)
        case expired
        case tooManyAttempts
        case alreadyUsed
        /// No code was mailed to this address for this purpose (or its send failed).
        case notFound
        /// Too many wrong codes for this address (`email.code.guessing.*`): nothing is checked (nor
        /// mailed) for `retryAfterSeconds`. The wrong code that reaches the threshold answers this too.
        case lockedOut(retryAfterSeconds: Int)
    }

    public let client: PostgresClient
    public let hasher: SecretHasher
    let metrics = EmailMetrics()

    public init(client: PostgresClient, hasher: SecretHasher) {
        self.client = client
        self.hasher = hasher
    }

    /// What a code's hash is bound to: the same digits for another address, purpose or tenant are
    /// worthless. A code of no tenant keeps the context codes had before tenants.
    public static func hashContext(email: String, purpose: String, tenant: String) -> String {
        tenant.isEmpty ? "email-code:\(email):\(purpose)" : "email-code:\(email):\(purpose):\(tenant)"
    }

    /// Judges the latest code mailed to `email` for `purpose` in `tenant` (the job's; "" for none).
    public func verify(email: String, purpose: EmailCodeJob.Purpose, tenant: String = "", code: String, logger: Logger) async throws -> Result {
        let address = EmailAddress.normalize(email)
        let secret = Secret(code)
        let result: Result = try await client.withTransaction(logger: logger) { connection in
            let find = CodeFind(email: address, purpose: purpose.rawValue, tenant: tenant)
            guard let found = try await find.first(on: connection, logger: logger) else { return .notFound }
            switch found.status {
            case .verified: return .alreadyUsed
            case .dead: return .tooManyAttempts
            case .expired: return .expired
            case .failed: return .notFound
            case .pending: break
            }
            if let lockedSeconds = found.lockedSeconds { return .lockedOut(retryAfterSeconds: max(1, lockedSeconds)) }
            let stored = StoredSecretHash(keyID: found.keyID, digest: found.codeHash)
            if hasher.verify(secret, context: Self.hashContext(email: address, purpose: purpose.rawValue, tenant: tenant), against: stored) {
                let used = try await CodeVerified(codeID: found.id).first(on: connection, logger: logger)
                guard used?.verified == true else { throw StoreError("herald.email_otp_verified found no pending code") }
                return .verified(email: address, purpose: purpose)
            }
            guard let failed = try await CodeGuessFailed(codeID: found.id).first(on: connection, logger: logger) else {
                throw StoreError("herald.email_otp_guess_failed gave no answer")
            }
            if let lockedSeconds = failed.lockedSeconds { return .lockedOut(retryAfterSeconds: max(1, lockedSeconds)) }
            return .wrongCode(attemptsLeft: failed.attemptsLeft)
        }
        metrics.codeCheck(Self.name(of: result))
        return result
    }

    /// The result's name (`heraldctl`'s output, the metric's label).
    public static func name(of result: Result) -> String {
        switch result {
        case .verified: "verified"
        case .wrongCode: "wrong_code"
        case .expired: "expired"
        case .tooManyAttempts: "too_many_attempts"
        case .alreadyUsed: "already_used"
        case .notFound: "not_found"
        case .lockedOut: "locked_out"
        }
    }

    /// Voids the pending code `verificationID` carried (herald.email_otp_void): a Twilio Verify
    /// verification canceled or approved by its update; a check of it answers `expired` from now on.
    public func void(verificationID: String, logger: Logger) async throws {
        try await CodeVoid(verificationID: verificationID).rows(on: client, logger: logger)
    }
}
