import Crypto
import Foundation

/// A secret as stored when it must be usable again later (an Apple refresh token, which Herald
/// sends back to Apple to revoke it): AES-256-GCM under a key of the ring, named by its id.
/// Never the secret in clear.
public struct SealedSecret: Sendable, Equatable {
    public var keyID: String
    /// 12 random bytes, new for every seal.
    public var nonce: [UInt8]
    public var ciphertext: [UInt8]
    /// The 16-byte GCM tag.
    public var tag: [UInt8]

    public init(keyID: String, nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        self.keyID = keyID
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
    }
}

/// Why a sealed secret could not be opened. Names the key id, never a key or the secret.
public struct SecretSealingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// Seals and opens secrets with a ``KeyRing`` (its own ring, not the HMAC keys': a key has one
/// purpose). New seals use the active key; older seals open while their key stays in the
/// ring, so keys rotate as the HMAC keys do. Each ring key (32+ bytes) gives its AES-256 key by
/// HKDF-SHA256. The context (the record the secret belongs to) is the GCM associated data: a
/// sealed secret copied to another record does not open.
public struct SecretSealer: Sendable {
    public let keyRing: KeyRing
    /// HKDF's info: what the derived keys are for. Another purpose, other keys, from the same ring.
    public let purpose: String

    public init(keyRing: KeyRing, purpose: String = "herald secret sealing v1") {
        self.keyRing = keyRing
        self.purpose = purpose
    }

    public func seal(_ secret: Secret, context: String) throws -> SealedSecret {
        let box = try AES.GCM.seal(Data(secret.revealed.utf8), using: key(keyRing.activeKeyID)!, nonce: AES.GCM.Nonce(),
                                   authenticating: Data(context.utf8))
        return SealedSecret(keyID: keyRing.activeKeyID, nonce: Array(box.nonce), ciphertext: Array(box.ciphertext), tag: Array(box.tag))
    }

    public func open(_ sealed: SealedSecret, context: String) throws(SecretSealingError) -> Secret {
        guard let key = key(sealed.keyID) else {
            throw SecretSealingError(reason: "sealed under key '\(sealed.keyID)', which is no longer in the ring")
        }
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: sealed.nonce), ciphertext: sealed.ciphertext, tag: sealed.tag)
            let plain = try AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
            return Secret(String(decoding: plain, as: UTF8.self))
        } catch {
            throw SecretSealingError(reason: "sealed secret does not open under key '\(sealed.keyID)' (altered, or another record's)")
        }
    }

    private func key(_ id: String) -> SymmetricKey? {
        guard let bytes = keyRing.keys[id] else { return nil }
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), info: Data(purpose.utf8), outputByteCount: 32)
    }
}
