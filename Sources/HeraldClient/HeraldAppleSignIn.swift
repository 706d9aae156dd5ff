import Foundation
import HeraldAppleCheck
import HeraldRuntime
import HeraldWire
import Logging

/// Sign in with Apple for a front API written in Swift: checks the identity token the app
/// got from Apple (signature with Apple's published keys, issuer, audience = one of
/// `apple.client_ids`, expiry, and the nonce) before the front API signs the user in.
/// docs/apple.md gives the same rules for a front API in any other language. Keep one
/// instance for the life of the process: it caches Apple's keys.
public struct HeraldAppleSignIn: Sendable {
    public let verifier: AppleIdentityVerifier

    /// Fetches Apple's keys from `apple.jwks_url` when first needed.
    public init(configuration: AppleConfiguration, logger: Logger) {
        verifier = AppleIdentityVerifier(configuration: configuration, logger: logger)
    }

    public init(verifier: AppleIdentityVerifier) {
        self.verifier = verifier
    }

    /// The identity token (`identityToken` of the app's `ASAuthorizationAppleIDCredential`,
    /// or `id_token` of the web flow) and the raw nonce the app generated and sent to Apple
    /// hashed. Returns who signed in (`sub`, the email and its flags, `real_user_status`) or
    /// throws the check that failed (``AppleTokenError``; its description never holds the token).
    public func verifyIdentityToken(_ identityToken: String, rawNonce: String) async throws(AppleTokenError) -> AppleIdentity {
        try await verifier.verify(identityToken, nonce: rawNonce)
    }
}
