/// Makes secrets from the system CSPRNG (`SystemRandomNumberGenerator`: getrandom(2) on Linux).
public enum SecretGenerator {
    /// `length` decimal digits, each uniform (an SMS one-time code).
    public static func numericCode(length: Int = 6) -> Secret {
        precondition((4...12).contains(length), "codes are 4 to 12 digits")
        var generator = SystemRandomNumberGenerator()
        return Secret(String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) }))
    }

    /// `bytes` random bytes as unpadded base64url (an email link code, a push secret);
    /// at least 16 bytes, i.e. 128 bits.
    public static func token(bytes: Int = 32) -> Secret {
        precondition(bytes >= 16, "tokens carry at least 128 bits")
        var generator = SystemRandomNumberGenerator()
        let raw = (0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var out = ""
        var buffer = 0, bits = 0
        for byte in raw {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                out.append(alphabet[(buffer >> bits) & 0x3F])
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (6 - bits)) & 0x3F]) }
        return Secret(out)
    }
}
