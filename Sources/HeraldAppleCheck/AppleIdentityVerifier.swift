import AsyncHTTPClient
import Foundation
import HeraldRuntime
import HeraldWire
import JWTKit
import Logging

/// Checks JWTs that Apple signs: Sign in with Apple identity tokens (``verify(_:nonce:)``) and
/// server-to-server notifications (``verifyNotification(_:maxAge:)``), both on
/// ``claims(of:)``: the RS256 signature with the key of Apple's key set that the header names,
/// `iss`, `aud` (one of `apple.client_ids`), `exp` and `iat` within `apple.leeway_seconds`.
/// Each failed check has its own ``AppleTokenError``; none carries the token.
public struct AppleIdentityVerifier: Sendable {
    /// The `iss` of everything Apple signs.
    public static let issuer = "https://appleid.apple.com"

    public let keySet: AppleKeySet
    public let clientIDs: Set<String>
    public let leeway: TimeInterval
    let now: @Sendable () -> Date

    public init(clientIDs: [String], leewaySeconds: Int, keySet: AppleKeySet, now: @escaping @Sendable () -> Date = { Date() }) {
        self.keySet = keySet
        self.clientIDs = Set(clientIDs)
        self.leeway = TimeInterval(leewaySeconds)
        self.now = now
    }

    /// The verifier `apple.*` describes, fetching Apple's keys through `client` (by default
    /// the providers' shared client, which never follows a redirect).
    public init(configuration: AppleConfiguration, client: HTTPClient = ProviderHTTP.client, logger: Logger) {
        self.init(clientIDs: configuration.clientIDs, leewaySeconds: configuration.leewaySeconds,
                  keySet: AppleKeySet(configuration: configuration, client: client, logger: logger))
    }

    /// An identity token from a sign-in: every check of ``claims(of:)``, then `exp` and `sub`
    /// must be present and `nonce` must be SHA-256 (hex) of `rawNonce`, the nonce the app
    /// generated and hashed into its request to Apple.
    public func verify(_ token: String, nonce rawNonce: String) async throws(AppleTokenError) -> AppleIdentity {
        let claims = try await self.claims(of: token)
        guard let expiresAt = claims.expiresAt else { throw .malformed("claim exp is missing") }
        guard let subject = claims.subject, !subject.isEmpty else { throw .malformed("claim sub is missing") }
        guard let nonce = claims.nonce, AppleNonce.matches(raw: rawNonce, claim: nonce) else { throw .nonceMismatch }
        return AppleIdentity(
            subject: subject, clientID: try clientID(of: claims), email: claims.email,
            emailVerified: claims.emailVerified, isPrivateEmail: claims.isPrivateEmail,
            realUserStatus: claims.realUserStatus.flatMap(AppleIdentity.RealUserStatus.init(rawValue:)),
            issuedAt: claims.issuedAt, expiresAt: expiresAt)
    }

    /// A server-to-server notification's `payload`: every check of ``claims(of:)``, `iat` no
    /// older than `maxAge`, a `jti`, and `events` a JSON object with `type` and `sub`. Whether
    /// the `jti` was seen before is the caller's check (it needs storage).
    public func verifyNotification(_ token: String, maxAge: TimeInterval) async throws(AppleTokenError) -> AppleNotification {
        let claims = try await self.claims(of: token)
        guard now().timeIntervalSince(claims.issuedAt) <= maxAge + leeway else { throw .stale }
        guard let jwtID = claims.jwtID, !jwtID.isEmpty else { throw .malformed("claim jti is missing") }
        guard let events = claims.events else { throw .malformed("claim events is missing") }
        let event: AppleNotification.Event
        do {
            event = try JSONDecoder().decode(AppleNotification.Event.self, from: Data(events.utf8))
        } catch {
            throw .malformed("claim events is not an object with type and sub")
        }
        return AppleNotification(jwtID: jwtID, clientID: try clientID(of: claims), issuedAt: claims.issuedAt, event: event)
    }

    /// The checks every Apple JWT passes: a compact JWS with `alg` RS256 and a `kid`; the
    /// signature with that key of Apple's set (fetched again for an unknown `kid`, at most once
    /// per interval); `iss`; `aud` one of the client ids; `iat` not in the future and `exp`
    /// (when present) not past, both with the leeway. Returns the claims for the caller's
    /// further checks.
    public func claims(of token: String) async throws(AppleTokenError) -> AppleTokenClaims {
        let header: JWTHeader
        do {
            header = try DefaultJWTParser().parse(Array(token.utf8), as: AppleTokenClaims.self).header
        } catch {
            throw .malformed("not a JWT with Apple's claims (iss, aud, iat)")
        }
        guard header.alg == "RS256" else { throw .malformed("header alg must be RS256") }
        guard let kid = header.kid, !kid.isEmpty else { throw .malformed("header kid is missing") }
        let keys = try await keySet.keys(for: kid)
        let claims: AppleTokenClaims
        do {
            claims = try await keys.verify(token, as: AppleTokenClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw .badSignature
        } catch {
            throw .malformed("the signature or claims could not be read")
        }
        guard claims.issuer == Self.issuer else { throw .wrongIssuer }
        _ = try clientID(of: claims)
        let now = now()
        guard claims.issuedAt.timeIntervalSince(now) <= leeway else { throw .issuedInFuture }
        if let expiresAt = claims.expiresAt, now.timeIntervalSince(expiresAt) > leeway { throw .expired }
        return claims
    }

    /// The configured client id the token is for (`aud`; Apple sends one).
    private func clientID(of claims: AppleTokenClaims) throws(AppleTokenError) -> String {
        guard let match = claims.audience.first(where: clientIDs.contains) else { throw .wrongAudience }
        return match
    }
}
