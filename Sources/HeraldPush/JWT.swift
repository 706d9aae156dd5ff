import Foundation
import HeraldRuntime

/// Compact JSON Web Tokens (RFC 7519) as the push providers want them: a header and claims
/// as JSON, base64url without padding, and a signature over `header.claims`.
public enum JWT {
    /// `base64url(header).base64url(claims).base64url(sign(signing input))`.
    public static func make(header: [String: Any], claims: [String: Any], sign: ([UInt8]) throws -> [UInt8]) rethrows -> String {
        let input = base64URL(json(header)) + "." + base64URL(json(claims))
        return input + "." + base64URL(try sign(Array(input.utf8)))
    }

    /// The three parts decoded: header, claims (JSON objects), signature and the signed input.
    public static func parse(_ token: String) -> (header: [String: Any], claims: [String: Any], signature: [UInt8], signingInput: [UInt8])? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let header = decodeBase64URL(String(parts[0])).flatMap({ try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }),
              let claims = decodeBase64URL(String(parts[1])).flatMap({ try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }),
              let signature = decodeBase64URL(String(parts[2]))
        else { return nil }
        return (header, claims, signature, Array("\(parts[0]).\(parts[1])".utf8))
    }

    static func json(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8))
    }

    public static func base64URL<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    public static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}
