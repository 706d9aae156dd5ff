import Foundation
import HeraldRuntime
import JWTKit

/// The APNs provider token: an ES256 JWT (jwt-kit; header `kid` = key id; claims `iss` = team
/// id, `iat` = whole seconds) signed with the team's `.p8` key. Signed once and reused by
/// every request until it is `refreshInterval` old (Apple: refresh between 20 and 60 minutes,
/// never per request), or until APNs refuses it (``invalidate(_:)``); callers that arrive
/// while it is being signed wait for that one signature. Thread-safe.
public final class APNsTokenCache: @unchecked Sendable {
    let key: ES256PrivateKey
    public let keyID: String
    public let teamID: String
    public let refreshInterval: TimeInterval
    let now: @Sendable () -> Date
    private let lock = NSLock()
    private var current: (token: String, issuedAt: Date)?
    private var signing: (task: Task<String, Never>, issuedAt: Date)?
    private var signatures = 0

    /// `pem`: the `.p8` file's text (PKCS#8 P-256). Errors never carry the key.
    public init(pem: String, keyID: String, teamID: String, refreshInterval: TimeInterval, now: @escaping @Sendable () -> Date = Date.init) throws(ConfigError) {
        do {
            key = try ES256PrivateKey(pem: pem)
        } catch {
            throw ConfigError(key: "push.apns.key", reason: "not a PEM P-256 private key (.p8)")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.refreshInterval = refreshInterval
        self.now = now
    }

    /// The current token, signing a new one when there is none or it is due.
    public func token() async -> String {
        enum Step { case ready(String), wait(Task<String, Never>, Date) }
        let step: Step = lock.withLock {
            let now = now()
            if let current, now.timeIntervalSince(current.issuedAt) < refreshInterval, now >= current.issuedAt {
                return .ready(current.token)
            }
            if let signing { return .wait(signing.task, signing.issuedAt) }
            let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let claims = ProviderClaims(iss: teamID, iat: Int64(issuedAt.timeIntervalSince1970))
            let task = Task { [key, keyID] in await Self.sign(claims, key: key, keyID: keyID) }
            signing = (task, issuedAt)
            return .wait(task, issuedAt)
        }
        switch step {
        case .ready(let token):
            return token
        case .wait(let task, let issuedAt):
            let token = await task.value
            lock.withLock {
                if signing?.task == task {
                    current = (token, issuedAt)
                    signing = nil
                    signatures += 1
                }
            }
            return token
        }
    }

    /// APNs refused `token` (403 ExpiredProviderToken / InvalidProviderToken): the next
    /// ``token()`` signs a new one. A token already replaced is left alone, so many requests
    /// refused at once cause one new signature, not one each.
    public func invalidate(_ token: String) {
        lock.withLock { if current?.token == token { current = nil } }
    }

    /// How many tokens were signed so far.
    public var signatureCount: Int { lock.withLock { signatures } }

    /// `{"iss": team id, "iat": whole seconds}`: exactly the claims APNs reads.
    struct ProviderClaims: JWTPayload {
        var iss: String
        var iat: Int64
        func verify(using _: some JWTAlgorithm) async throws {}
    }

    /// A P-256 signature cannot fail with a key that parsed; an empty token would be refused
    /// by APNs (403) and signed again.
    static func sign(_ claims: ProviderClaims, key: ES256PrivateKey, keyID: String) async -> String {
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: keyID)
        await keys.add(ecdsa: key, kid: kid)
        return (try? await keys.sign(claims, kid: kid)) ?? ""
    }
}
