import Foundation
import HeraldRuntime
import JWTKit

/// The `client_secret` of Apple's token and revoke endpoints: an ES256 JWT signed in-process
/// (JWTKit) with the team's `.p8` key, header `kid` the key id, claims `iss` the team id,
/// `sub` the client id, `aud` https://appleid.apple.com, `iat` and `exp`
/// (`apple.client_secret_lifetime_seconds` later; Apple allows six months at most). One is
/// cached per client id and signed again once half its lifetime has passed, so a secret in
/// use is never near its expiry.
public actor AppleClientSecret {
    /// The `aud` Apple requires.
    public static let audience = "https://appleid.apple.com"

    public let teamID: String
    public let keyID: String
    public let lifetime: TimeInterval
    private let key: ES256PrivateKey
    /// The signer, made at the first signature (adding a key to a collection is async).
    private var keys: JWTKeyCollection?
    private let now: @Sendable () -> Date
    private var cache: [String: (secret: Secret, issuedAt: Date)] = [:]
    /// Secrets signed so far (tests check the cache).
    public private(set) var signatures = 0

    /// `pem`: the `.p8` file's text (PKCS#8, P-256). Errors name the key, never its content.
    public init(pem: String, keyID: String, teamID: String, lifetimeSeconds: Int, now: @escaping @Sendable () -> Date = Date.init) throws(ConfigError) {
        do {
            key = try ES256PrivateKey(pem: pem)
        } catch {
            throw ConfigError(key: "apple.private_key", reason: "not a PEM P-256 private key (the .p8 file from the developer portal)")
        }
        self.teamID = teamID
        self.keyID = keyID
        self.lifetime = TimeInterval(lifetimeSeconds)
        self.now = now
    }

    /// The secret for `clientID`: the cached one while it is younger than half its lifetime.
    public func secret(for clientID: String) async throws -> Secret {
        let now = now()
        if let cached = cache[clientID], now >= cached.issuedAt, now.timeIntervalSince(cached.issuedAt) < lifetime / 2 {
            return cached.secret
        }
        let keys: JWTKeyCollection
        if let made = self.keys {
            keys = made
        } else {
            keys = await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: keyID))
            self.keys = keys
        }
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let claims = Claims(iss: IssuerClaim(value: teamID), sub: SubjectClaim(value: clientID), aud: AudienceClaim(value: Self.audience),
                            iat: IssuedAtClaim(value: issuedAt), exp: ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime)))
        var header = JWTHeader()
        header.alg = "ES256"
        header.kid = keyID
        let token = try await keys.sign(claims, kid: JWKIdentifier(string: keyID), header: header)
        let secret = Secret(token)
        cache[clientID] = (secret, issuedAt)
        signatures += 1
        return secret
    }

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var sub: SubjectClaim
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        func verify(using _: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
    }
}
