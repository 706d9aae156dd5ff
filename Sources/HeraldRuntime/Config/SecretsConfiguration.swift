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
        let text = hmacKeys.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            throw ConfigError(key: "secrets.hmac_keys", reason: "required: set HERALD_SECRETS_HMAC_KEYS_FILE to a file of 'key-id:base64-key' (32+ random bytes; `openssl rand -base64 32`)")
        }
        let active = activeKeyID.isEmpty
            ? String(text.prefix(while: { $0 != ":" }).trimmingCharacters(in: .whitespaces))
            : activeKeyID
        return try KeyRing.parse(text, activeKeyID: active, key: "secrets.hmac_keys")
    }
}
