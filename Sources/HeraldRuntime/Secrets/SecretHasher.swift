import Crypto
import Foundation

/// A secret as stored: the id of the key it was hashed with and the HMAC-SHA256 digest.
/// Never the secret itself.
public struct StoredSecretHash: Sendable, Equatable {
    public var keyID: String
    public var digest: [UInt8]

    public init(keyID: String, digest: [UInt8]) {
        self.keyID = keyID
        self.digest = digest
    }
}

/// Hashes and checks secrets with the ``KeyRing``. The hash is bound to a context (the
/// verification id, receipt or email it belongs to), so a secret's hash is worthless for
/// any other record.
public struct SecretHasher: Sendable {
    public let keyRing: KeyRing

    public init(keyRing: KeyRing) { self.keyRing = keyRing }

    public func hash(_ secret: Secret, context: String) -> StoredSecretHash {
        let key = SymmetricKey(data: keyRing.keys[keyRing.activeKeyID]!)
        return StoredSecretHash(keyID: keyRing.activeKeyID, digest: Array(HMAC<SHA256>.authenticationCode(for: Self.message(secret, context), using: key)))
    }

    /// The secret's hash under every key of the ring, the active key's first: how a record
    /// found by its secret alone (an email link code) is looked up while keys rotate.
    public func hashesUnderEveryKey(_ secret: Secret, context: String) -> [StoredSecretHash] {
        let ids = [keyRing.activeKeyID] + keyRing.keys.keys.filter { $0 != keyRing.activeKeyID }.sorted()
        return ids.map { id in
            StoredSecretHash(keyID: id, digest: Array(HMAC<SHA256>.authenticationCode(for: Self.message(secret, context), using: SymmetricKey(data: keyRing.keys[id]!))))
        }
    }

    /// Constant time in the secret. False when the hash's key is no longer in the ring.
    public func verify(_ secret: Secret, context: String, against stored: StoredSecretHash) -> Bool {
        guard let bytes = keyRing.keys[stored.keyID] else { return false }
        let key = SymmetricKey(data: bytes)
        return HMAC<SHA256>.isValidAuthenticationCode(stored.digest, authenticating: Self.message(secret, context), using: key)
    }

    /// `context`, a zero byte, then the secret: no two (context, secret) pairs give the same message.
    private static func message(_ secret: Secret, _ context: String) -> [UInt8] {
        Array(context.utf8) + [0] + Array(secret.revealed.utf8)
    }
}
