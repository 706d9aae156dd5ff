import HeraldRuntime
import Logging
import PostgresNIO

/// Numbers that verified a code (`herald.sms_known_numbers`): the fraud guard never refuses
/// them, so a pumping burst that pauses a prefix or a region cannot lock out existing users.
/// Kept only as an HMAC of the number (hex) under the key ring's active key when it verified;
/// the guard looks a number up under every key of the ring, so a rotation forgets no one.
public enum KnownNumbers {
    static let context = "sms-known-number"

    /// The number's HMACs under every key of the ring, hex, comma-separated (`herald.fraud_guard_check`'s `p_known_hashes`).
    public static func hashes(_ e164: String, hasher: SecretHasher) -> String {
        hasher.hashesUnderEveryKey(Secret(e164), context: context).map { Hex.lower($0.digest) }.joined(separator: ",")
    }

    /// Records that `e164` verified a code (on the caller's connection, in its transaction).
    static func verified(_ e164: String, hasher: SecretHasher, on connection: PostgresConnection, logger: Logger) async throws {
        let hash = hasher.hash(Secret(e164), context: context)
        try await KnownNumberVerified(numberHash: Hex.lower(hash.digest), keyID: hash.keyID).rows(on: connection, logger: logger)
    }
}
