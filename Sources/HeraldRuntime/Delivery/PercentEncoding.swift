/// Percent-encoding of text's UTF-8, in the two forms Herald writes: ``rfc3986`` for a link's
/// query (an email sign-in link), ``form`` for `application/x-www-form-urlencoded` bodies and
/// path segments sent to providers. Every other byte is `%XX`, upper-case hex.
public enum PercentEncoding: Sendable {
    /// RFC 3986's unreserved characters as they are: `A–Z a–z 0–9 - . _ ~`.
    case rfc3986
    /// The form encoding: `A–Z a–z 0–9 - . _ *` as they are, a space as `+`.
    case form

    public func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.append(Character(Unicode.Scalar(byte)))
            case UInt8(ascii: "~") where self == .rfc3986, UInt8(ascii: "*") where self == .form:
                out.append(Character(Unicode.Scalar(byte)))
            case UInt8(ascii: " ") where self == .form:
                out.append("+")
            default:
                out.append("%")
                out.append(Self.hexDigits[Int(byte >> 4)])
                out.append(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
        return out
    }

    private static let hexDigits = Array("0123456789ABCDEF")
}
