import Crypto

/// Lower-case hex of the SHA-256 of a text's UTF-8 bytes, as `sha256sum` prints it: the ledger's
/// file checksums, and the keyless digests of values that are random or public already (Apple's
/// codes and nonces, device tokens, a request id). Not for a secret a guess could find: those
/// are HMACs under the key ring (``SecretHasher``).
public enum SHA256Hex {
    public static func of(_ text: String) -> String {
        Hex.lower(SHA256.hash(data: Array(text.utf8)))
    }
}
