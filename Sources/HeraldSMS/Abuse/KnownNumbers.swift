import HeraldRuntime
import Logging
import PostgresNIO

/// Numbers that verified a code (`herald.sms_known_numbers`): the fraud guard never refuses
/// them, so a pumping burst that pauses a prefix or a region cannot lock out existing users.
/// Kept only as an HMAC of the number under the key ring's active key (hex); numbers verified
/// under an earlier active key are known again once they verify under the new one.
enum KnownNumbers {
    static let context = "sms-known-number"

    static func hash(_ e164: String, hasher: SecretHasher) -> StoredSecretHash {
        hasher.hash(Secret(e164), context: context)
    }

    static func hex(_ hash: StoredSecretHash) -> String {
        hash.digest.map { String(format: "%02x", $0) }.joined()
    }

    /// Records that `e164` verified a code (on the caller's connection, in its transaction).
    static func verified(_ e164: String, hasher: SecretHasher, on connection: PostgresConnection, logger: Logger) async throws {
        let hash = hash(e164, hasher: hasher)
        try await connection.query("""
            INSERT INTO herald.sms_known_numbers (number_hash, key_id, verified_at) VALUES (\(hex(hash)), \(hash.keyID), now())
            ON CONFLICT (number_hash) DO UPDATE SET verified_at = now()
            """, logger: logger)
    }
}
