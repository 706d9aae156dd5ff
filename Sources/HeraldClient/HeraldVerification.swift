import Foundation
import HeraldEmailCheck
import HeraldPhoneCheck
import HeraldPushCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// The check side of Herald for a front API written in Swift: is this the code the user
/// received? Reads and updates Herald's tables directly (the same database the workers use),
/// with the same HMAC keys (`secrets.hmac_keys`).
public struct HeraldVerification: Sendable {
    let phone: PhoneVerifier
    let push: PushVerifier
    let email: EmailLinkVerifier
    let emailCode: EmailCodeVerifier

    public init(database: PostgresClient, secrets: SecretsConfiguration) throws {
        let hasher = SecretHasher(keyRing: try secrets.keyRing())
        phone = PhoneVerifier(client: database, hasher: hasher)
        push = PushVerifier(client: database, hasher: hasher)
        email = EmailLinkVerifier(client: database, hasher: hasher)
        emailCode = EmailCodeVerifier(client: database, hasher: hasher)
    }

    /// Checks `code` against the SMS sent for `verificationID` (see ``PhoneVerifier``):
    /// verified (phone number, purpose) once; wrong code (attempts left); expired; too many
    /// attempts; already used; not found.
    public func verifyPhone(verificationID: String, code: String, logger: Logger) async throws -> PhoneVerifier.Result {
        try await phone.verify(verificationID: verificationID, code: code, logger: logger)
    }

    /// Voids the pending code `verificationID` carried (a Twilio Verify verification canceled
    /// or approved by its update): a check of it answers `expired` from now on.
    public func voidPhoneCode(verificationID: String, logger: Logger) async throws {
        try await phone.void(verificationID: verificationID, logger: logger)
    }

    /// Which of these SMS verifications carry a code (were not refused): a Twilio Verify
    /// verification is judged through the last of its sends that does.
    public func phoneCodeCarriers(_ verificationIDs: [String], logger: Logger) async throws -> Set<String> {
        try await phone.codeCarriers(verificationIDs, logger: logger)
    }

    /// Of `verificationIDs`, the SMS verifications herald-sms ended without sending (see ``PhoneVerifier/undelivered(_:logger:)``).
    public func phoneSendsUndelivered(_ verificationIDs: [String], logger: Logger) async throws -> Set<String> {
        try await phone.undelivered(verificationIDs, logger: logger)
    }

    /// Checks `code` against the pending email code of `email`, `purpose` and `tenant` (the job's;
    /// "" for none; see ``EmailCodeVerifier``): the same answers as
    /// ``verifyPhone(verificationID:code:logger:)``, the address's lockout included.
    public func verifyEmailCode(email: String, purpose: EmailCodeJob.Purpose, tenant: String = "", code: String, logger: Logger) async throws -> EmailCodeVerifier.Result {
        try await emailCode.verify(email: email, purpose: purpose, tenant: tenant, code: code, logger: logger)
    }

    /// Voids the pending email code `verificationID` carried (a Twilio Verify verification canceled or approved).
    public func voidEmailCode(verificationID: String, logger: Logger) async throws {
        try await emailCode.void(verificationID: verificationID, logger: logger)
    }

    /// Checks the secret the app received by silent push for `receipt` (see ``PushVerifier``):
    /// verified (app id, platform) once; mismatch; expired; already used; not found.
    public func confirmAppVerification(receipt: String, secret: String, logger: Logger) async throws -> PushVerifier.Result {
        try await push.confirm(receipt: receipt, secret: secret, logger: logger)
    }

    /// The app presented `token` after registering it with APNs or FCM at `registeredAt`: a
    /// token marked invalid before that moment is valid again (APNs's 410 timestamp says a
    /// token is invalid unless registered after it). Returns whether it changed.
    @discardableResult
    public func deviceTokenRegistered(platform: PushVerificationJob.Platform, token: String, at registeredAt: Date, logger: Logger) async throws -> Bool {
        try await PushTokens.registered(platform: platform, token: token, at: registeredAt, client: push.client, logger: logger)
    }

    /// Completes an email-link sign-in (Firebase's `signInWithEmailLink`): consumes the
    /// `oobCode` of a `sign_in` link if it was sent to `email` (see ``EmailLinkVerifier``):
    /// success (continue URL and settings) once; email mismatch; expired; already used; not found.
    public func consumeEmailLink(email: String, oobCode: String, logger: Logger) async throws -> EmailLinkVerifier.Result {
        try await self.email.consume(email: email, oobCode: oobCode, mode: .signIn, logger: logger)
    }

    /// The same for the other email actions: `verify_email` (Firebase's `applyActionCode`),
    /// `reset_password` (`confirmPasswordReset`, before the front API sets the new password),
    /// `verify_and_change_email` (using it sends the old address the `recover_email` notice),
    /// `recover_email` (answers `recovered`: the address to restore and the one it replaced).
    /// A code of another mode is not found; one replaced by the use of another link of the
    /// same address and mode, or by a newer reset request, is `superseded`.
    public func consumeEmailAction(_ mode: EmailActionJob.Mode, email: String, oobCode: String, logger: Logger) async throws -> EmailLinkVerifier.Result {
        try await self.email.consume(email: email, oobCode: oobCode, mode: mode, logger: logger)
    }
}
