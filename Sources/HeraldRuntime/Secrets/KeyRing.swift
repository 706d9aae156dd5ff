
import Foundation

/// The HMAC keys secrets are hashed with, each under a key id so keys rotate: new hashes
/// use the active key; hashes made with an older key still verify while it stays here.
public struct KeyRing: Sendable {
    public let activeKeyID: String
    let keys: [String: [UInt8]]

    /// At least 32 bytes per key; the key id is letters, digits, '-' or '_'.
    public init(keys: [String: [UInt8]], activeKeyID: String) throws(ConfigError) {
        guard !keys.isEmpty else { throw ConfigError(key: "hmac keys", reason: "at least one key is needed") }
        for (id, bytes) in keys {
            guard !id.isEmpty, id.count <= 32, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                throw ConfigError(key: "hmac keys", reason: "key ids are 1 to 32 letters, digits, '-' or '_'")
            }
            guard bytes.count >= 32 else {
                throw ConfigError(key: "hmac keys", reason: "key '\(id)' is shorter than 32 bytes")
            }
        }
        guard keys[activeKeyID] != nil else {
            throw ConfigError(key: "hmac keys", reason: "the active key id '\(activeKeyID)' is not among the keys")
        }
        self.keys = keys
        self.activeKeyID = activeKeyID
    }

    /// The ring configured under `key` (`secrets.hmac_keys`, `apple.token_keys`): `text` in the
    /// form of ``parse(_:activeKeyID:key:)``, the active key id (empty: the first listed).
    /// Empty text is an error naming `key` with `hint` (how to make one).
    public static func configured(_ text: String, activeKeyID: String, key: String, hint: String) throws(ConfigError) -> KeyRing {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw ConfigError(key: key, reason: "required: \(hint)") }
        let active = activeKeyID.isEmpty
            ? String(text.prefix(while: { $0 != ":" }).trimmingCharacters(in: .whitespaces))
            : activeKeyID
        return try parse(text, activeKeyID: active, key: key)
    }

    /// Parses `id:base64,id:base64` (the form of an environment variable or a secret file).
    /// The key values never appear in an error.
    public static func parse(_ text: String, activeKeyID: String, key: String) throws(ConfigError) -> KeyRing {
        var keys: [String: [UInt8]] = [:]
        for entry in text.split(whereSeparator: { $0 == "," || $0.isNewline }) {
            let parts = entry.trimmingCharacters(in: .whitespaces).split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let bytes = Data(base64Encoded: String(parts[1])) else {
                throw ConfigError(key: key, reason: "each entry must be key-id:base64-key")
            }
            keys[String(parts[0])] = Array(bytes)
        }
        do {
            return try KeyRing(keys: keys, activeKeyID: activeKeyID)
        } catch {
            throw ConfigError(key: key, reason: error.reason)
        }
    }
}
