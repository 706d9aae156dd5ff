import HeraldCore
import Logging
import PostgresNIO

/// The check side of Herald for a front API written in Swift: is this the code the user
/// received? Reads and updates Herald's tables directly (the same database the workers use),
/// with the same HMAC keys (`secrets.hmac_keys`).
public struct HeraldVerification: Sendable {
    let phone: PhoneVerifier
    let email: EmailLinkVerifier

    public init(database: PostgresClient, secrets: SecretsConfiguration) throws {
        let hasher = SecretHasher(keyRing: try secrets.keyRing())
        phone = PhoneVerifier(client: database, hasher: hasher)
        email = EmailLinkVerifier(client: database, hasher: hasher)
    }

    /// Checks `code` against the SMS sent for `verificationID` (see ``PhoneVerifier``):
    /// verified (phone number, purpose) once; wrong code (attempts left); expired; too many
    /// attempts; already used; not found.
    public func verifyPhone(verificationID: String, code: String, logger: Logger) async throws -> PhoneVerifier.Result {
        try await phone.verify(verificationID: verificationID, code: code, logger: logger)
    }

    /// Completes an email-link sign-in (Firebase's `signInWithEmailLink`): consumes the
    /// `oobCode` of a `sign_in` link if it was sent to `email` (see ``EmailLinkVerifier``):
    /// success (continue URL and settings) once; email mismatch; expired; already used; not found.
    public func consumeEmailLink(email: String, oobCode: String, logger: Logger) async throws -> EmailLinkVerifier.Result {
        try await self.email.consume(email: email, oobCode: oobCode, mode: .signIn, logger: logger)
    }

    /// The same for the other email actions: `verify_email` (Firebase's `applyActionCode`),
    /// `reset_password` (`confirmPasswordReset`, before the front API sets the new password),
    /// `verify_and_change_email`. A code of another mode is not found.
    public func consumeEmailAction(_ mode: EmailActionJob.Mode, email: String, oobCode: String, logger: Logger) async throws -> EmailLinkVerifier.Result {
        try await self.email.consume(email: email, oobCode: oobCode, mode: mode, logger: logger)
    }
}
