import Foundation
import HeraldRuntime

/// The `apple.*` keys of `herald-apple`'s calls to Apple's token and revoke endpoints: the
/// client secret's team, key and lifetime, the endpoints, and the key ring the refresh tokens
/// are sealed with. Part of ``AppleConfiguration`` (read with its other keys); only
/// `herald-apple` needs them set (``checkWorker()``).
public struct AppleTokenSettings: Sendable {
    /// The 10-character Team ID of the developer account (`iss` of the client secret).
    public var teamID = ""
    /// The 10-character Key ID of the Sign in with Apple key (`kid` of the client secret).
    public var keyID = ""
    /// The `.p8` key's PEM text (PKCS#8, P-256). Secret: give it as a file
    /// (`private_key_file:`, `HERALD_APPLE_PRIVATE_KEY_FILE`), never in the repository.
    public var privateKey = ""
    public var tokenURL = "https://appleid.apple.com/auth/token"
    public var revokeURL = "https://appleid.apple.com/auth/revoke"
    /// A client secret's `exp` - `iat`; it is signed again at half of it. Apple: six months at most
    /// (``maximumClientSecretLifetimeSeconds``).
    public var clientSecretLifetimeSeconds = 86_400
    /// Apple's limit on a client secret's lifetime.
    static let maximumClientSecretLifetimeSeconds = 15_777_000
    public var timeoutMilliseconds = 10_000
    /// `id:base64,…` (32+ random bytes each): the refresh tokens' AES-GCM keys. Secret: a file
    /// (`token_keys_file:`, `HERALD_APPLE_TOKEN_KEYS_FILE`).
    public var tokenKeys = ""
    /// The key id new seals use; empty: the first listed.
    public var tokenActiveKey = ""

    public init() {}

    public init(source: ConfigSource) throws {
        teamID = try source.string("apple.team_id", default: "")
        keyID = try source.string("apple.key_id", default: "")
        privateKey = try source.string("apple.private_key", default: "", secret: true)
        tokenURL = try AppleConfiguration.url(source, "apple.token_url", tokenURL)
        revokeURL = try AppleConfiguration.url(source, "apple.revoke_url", revokeURL)
        clientSecretLifetimeSeconds = try source.int("apple.client_secret_lifetime_seconds", default: clientSecretLifetimeSeconds,
                                                     range: 300...Self.maximumClientSecretLifetimeSeconds)
        timeoutMilliseconds = try source.int("apple.timeout_ms", default: timeoutMilliseconds, range: 100...120_000)
        tokenKeys = try source.string("apple.token_keys", default: "", secret: true)
        tokenActiveKey = try source.string("apple.token_active_key", default: "")
        for (key, value) in [("apple.team_id", teamID), ("apple.key_id", keyID)] where !value.isEmpty {
            guard value.count == 10, value.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
                throw ConfigError(key: key, reason: "must be the 10-character identifier (A-Z, 0-9) the developer portal shows")
            }
        }
    }

    /// What `herald-apple` cannot start without: the team, key id and `.p8` key of the
    /// client secret, and the token key ring. Errors name the key, never a value.
    public func checkWorker(clientIDs: [String]) throws(ConfigError) {
        guard !clientIDs.isEmpty else { throw ConfigError(key: "apple.client_ids", reason: "required: the bundle id and services id(s) Apple issues codes to") }
        guard !teamID.isEmpty else { throw ConfigError(key: "apple.team_id", reason: "required: the Team ID of the developer account") }
        guard !keyID.isEmpty else { throw ConfigError(key: "apple.key_id", reason: "required: the Key ID of the Sign in with Apple key") }
        guard !privateKey.isEmpty else {
            throw ConfigError(key: "apple.private_key", reason: "required: set apple.private_key_file (or HERALD_APPLE_PRIVATE_KEY_FILE) to the .p8 file")
        }
    }

    /// The ring the refresh tokens are sealed with.
    public func tokenKeyRing() throws(ConfigError) -> KeyRing {
        try KeyRing.configured(tokenKeys, activeKeyID: tokenActiveKey, key: "apple.token_keys",
                               hint: "set apple.token_keys_file (or HERALD_APPLE_TOKEN_KEYS_FILE) to a file of 'key-id:base64-key' (32+ random bytes; `openssl rand -base64 32`)")
    }

    /// The keys with their effective values, secrets masked (for `heraldctl config check`).
    public var effectiveValues: [String: Any] {
        func mask(_ value: String) -> String { value.isEmpty ? "" : "***" }
        return [
            "apple.team_id": teamID, "apple.key_id": keyID, "apple.private_key": mask(privateKey),
            "apple.token_url": tokenURL, "apple.revoke_url": revokeURL,
            "apple.client_secret_lifetime_seconds": clientSecretLifetimeSeconds, "apple.timeout_ms": timeoutMilliseconds,
            "apple.token_keys": mask(tokenKeys), "apple.token_active_key": tokenActiveKey,
        ]
    }
}
