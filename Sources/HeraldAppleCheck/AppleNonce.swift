import HeraldRuntime

/// The nonce of Sign in with Apple: the app sends SHA-256 of a random raw nonce to Apple
/// (lowercase hex, as Apple's and Firebase's samples do), Apple copies it into the identity
/// token's `nonce`, and the app hands the raw nonce to its server.
public enum AppleNonce {
    /// Lowercase hex of SHA-256(`raw`): what the token's `nonce` claim must be.
    public static func hash(_ raw: String) -> String {
        SHA256Hex.of(raw)
    }

    /// Whether `claim` is the hash of `raw`, in time independent of where they differ
    /// (hex letters in either case).
    public static func matches(raw: String, claim: String) -> Bool {
        let expected = Array(hash(raw).utf8)
        let given = Array(claim.lowercased().utf8)
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ given[index] }
        return difference == 0
    }
}
