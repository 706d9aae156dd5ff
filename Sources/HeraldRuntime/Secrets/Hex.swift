/// Lower-case hex, two digits a byte, as `sha256sum` prints a digest: how the database keeps the
/// digests and HMACs it is given as text (the ledger's checksums, link-code digests, known
/// numbers' HMACs).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func lower(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
