import Foundation

/// `secrets.*`: the HMAC keys every stored secret (SMS code, link code, push secret) is
/// hashed with. Give them as a file (`HERALD_SECRETS_HMAC_KEYS_FILE` or `hmac_keys_file:`),
/// never in the repository.
public struct SecretsConfiguration: Sendable {
    /// `id:base64,id:base64`; empty when not configured.
    public var hmacKeys: String
    /// The key id new hashes use; empty means the first key listed.
    public var activeKeyID: String

    public init(hmacKeys: String = "", activeKeyID: String = "") {
        self.hmacKeys = hmacKeys
        self.activeKeyID = activeKeyID
    }

    init(source: ConfigSource) throws {
        self.hmacKeys = try source.string("secrets.hmac_keys", default: "", secret: true)
        self.activeKeyID = try source.string("secrets.hmac_active_key", default: "")
    }

    /// The key ring, or a configuration error naming the key to set.
    public func keyRing() throws(ConfigError) -> KeyRing {
        try KeyRing.configured(hmacKeys, activeKeyID: activeKeyID, key: "secrets.hmac_keys",
                               hint: "set HERALD_SECRETS_HMAC_KEYS_FILE to a file of 'key-id:base64-key' (32+ random bytes; `openssl rand -base64 32`)")
    }
}
