import Crypto
import Foundation
import HeraldRuntime

/// The APNs provider token: an ES256 JWT (`kid` = key id; claims `iss` = team id, `iat` =
/// whole seconds) signed with the team's `.p8` key. Signed once and reused by every request
/// until it is `refreshInterval` old (Apple: refresh between 20 and 60 minutes, never per
/// request), or until APNs refuses it (``invalidate(_:)``). Thread-safe.
public final class APNsTokenCache: @unchecked Sendable {
    let key: P256.Signing.PrivateKey
    public let keyID: String
    public let teamID: String
    public let refreshInterval: TimeInterval
    let now: @Sendable () -> Date
    private let lock = NSLock()
    private var current: (token: String, issuedAt: Date)?
    private var signatures = 0

    /// `pem`: the `.p8` file's text (PKCS#8 P-256). Errors never carry the key.
    public init(pem: String, keyID: String, teamID: String, refreshInterval: TimeInterval, now: @escaping @Sendable () -> Date = Date.init) throws(ConfigError) {
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ConfigError(key: "push.apns.key", reason: "not a PEM P-256 private key (.p8)")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.refreshInterval = refreshInterval
        self.now = now
    }

    /// The current token, signing a new one when there is none or it is due.
    public func token() -> String {
        lock.lock(); defer { lock.unlock() }
        let now = now()
        if let current, now.timeIntervalSince(current.issuedAt) < refreshInterval, now >= current.issuedAt {
            return current.token
        }
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let token = JWT.make(header: ["alg": "ES256", "kid": keyID], claims: ["iss": teamID, "iat": Int(issuedAt.timeIntervalSince1970)]) { input in
            Array((try? key.signature(for: input).rawRepresentation) ?? Data())
        }
        current = (token, issuedAt)
        signatures += 1
        return token
    }

    /// APNs refused `token` (403 ExpiredProviderToken / InvalidProviderToken): the next
    /// ``token()`` signs a new one. A token already replaced is left alone, so many requests
    /// refused at once cause one new signature, not one each.
    public func invalidate(_ token: String) {
        lock.lock(); defer { lock.unlock() }
        if current?.token == token { current = nil }
    }

    /// How many tokens were signed so far.
    public var signatureCount: Int { lock.withLock { signatures } }
}
