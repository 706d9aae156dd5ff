import Foundation

/// A parsed `amqp://` or `amqps://` URL.
///
/// `amqp://user:password@host:port/vhost`. User, password and vhost are percent-decoded;
/// an empty path means vhost `/` (write `%2f` explicitly to be clear); IPv6 literals go in
/// brackets (`amqp://[::1]:5672/`). Missing user and password default to `guest`.
/// `description` and every error leave the password out.
public struct AMQPURL: Sendable, Equatable, CustomStringConvertible {
    public var useTLS: Bool
    /// Host name or IP literal, without brackets.
    public var host: String
    public var port: Int
    public var vhost: String
    public var user: String
    public var password: String

    public init(useTLS: Bool = false, host: String = "127.0.0.1", port: Int? = nil, vhost: String = "/",
                user: String = "guest", password: String = "guest") {
        self.useTLS = useTLS
        self.host = host
        self.port = port ?? (useTLS ? 5671 : 5672)
        self.vhost = vhost
        self.user = user
        self.password = password
    }

    public init(_ string: String) throws(AMQPError) {
        var rest = Substring(string.trimmingCharacters(in: .whitespacesAndNewlines))
        let scheme: String
        if let range = rest.range(of: "://") {
            scheme = rest[..<range.lowerBound].lowercased()
            rest = rest[range.upperBound...]
        } else {
            throw .invalidURL("missing scheme (expected amqp:// or amqps://)")
        }
        switch scheme {
        case "amqp": useTLS = false
        case "amqps": useTLS = true
        default: throw .invalidURL("unsupported scheme '\(scheme)' (expected amqp or amqps)")
        }
        if rest.contains("?") || rest.contains("#") {
            // Query parameters (heartbeat=…, …) are not supported; configure them in AMQPConfiguration.
            throw .invalidURL("query strings and fragments are not supported")
        }
        // authority / path
        let authority: Substring
        let path: Substring?
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        } else {
            authority = rest
            path = nil
        }
        // userinfo @ hostport (the last @ separates: passwords may contain a raw @)
        var hostPort = authority
        user = "guest"
        password = "guest"
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                guard let u = Self.percentDecode(userInfo[..<colon]) else {
                    throw .invalidURL("user name has an invalid percent escape")
                }
                guard let p = Self.percentDecode(userInfo[userInfo.index(after: colon)...]) else {
                    throw .invalidURL("password has an invalid percent escape")
                }
                user = u
                password = p
            } else {
                guard let u = Self.percentDecode(userInfo) else {
                    throw .invalidURL("user name has an invalid percent escape")
                }
                user = u
                password = ""
            }
        }
        // host [: port]
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else {
                throw .invalidURL("IPv6 host is missing its closing ']'")
            }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" }) else {
                throw .invalidURL("invalid IPv6 literal host")
            }
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidURL("unexpected text after IPv6 host") }
                portText = after.dropFirst()
            }
        } else {
            if let colon = hostPort.firstIndex(of: ":") {
                host = String(hostPort[..<colon])
                portText = hostPort[hostPort.index(after: colon)...]
                if portText!.contains(":") {
                    throw .invalidURL("IPv6 hosts must be written in brackets")
                }
            } else {
                host = String(hostPort)
            }
            guard let decoded = Self.percentDecode(Substring(host)) else {
                throw .invalidURL("host has an invalid percent escape")
            }
            host = decoded
        }
        guard !host.isEmpty else { throw .invalidURL("missing host") }
        // A list's stray comma (`amqp://a,amqp://b,`) or whitespace is no host.
        guard !host.contains(where: { $0 == "," || $0.isWhitespace }) else { throw .invalidURL("invalid character in host") }
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else {
                throw .invalidURL(portText.isEmpty ? "empty port" : "port '\(portText)' is not a number in 1...65535")
            }
            port = p
        } else {
            port = useTLS ? 5671 : 5672
        }
        // vhost
        if let path, !path.isEmpty {
            if path.contains("/") {
                throw .invalidURL("vhost must be a single path segment (percent-encode '/' as %2f)")
            }
            guard let v = Self.percentDecode(path) else {
                throw .invalidURL("vhost has an invalid percent escape")
            }
            vhost = v
        } else {
            vhost = "/"
        }
    }

    /// A comma-separated list of URLs, one per node of a cluster
    /// (`amqp://u:p@node-1:5672/%2f,amqp://u:p@node-2:5672/%2f`). A comma ends a URL only where
    /// the next one's scheme follows, so a raw comma may stay in a password.
    public static func list(_ text: String) throws(AMQPError) -> [AMQPURL] {
        var items: [Substring] = []
        var rest = Substring(text)
        while let comma = rest.indices.first(where: { index in
            rest[index] == "," && ["amqp://", "amqps://"].contains { rest[rest.index(after: index)...].trimmingPrefix(while: \.isWhitespace).lowercased().hasPrefix($0) }
        }) {
            items.append(rest[..<comma])
            rest = rest[rest.index(after: comma)...]
        }
        items.append(rest)
        var urls: [AMQPURL] = []
        for (n, item) in items.enumerated() {
            do {
                urls.append(try AMQPURL(String(item)))
            } catch {
                guard items.count > 1, case .invalidURL(let reason) = error else { throw error }
                throw .invalidURL("node \(n + 1) of \(items.count): \(reason)")
            }
        }
        return urls
    }

    /// The URL with the password replaced by `***`.
    public var description: String {
        let scheme = useTLS ? "amqps" : "amqp"
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let vhostPart = Self.percentEncode(vhost)
        return "\(scheme)://\(Self.percentEncode(user)):***@\(hostPart):\(port)/\(vhostPart)"
    }

    static func percentDecode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let hi = iterator.next().flatMap(Self.hexValue), let lo = iterator.next().flatMap(Self.hexValue) else {
                    return nil
                }
                bytes.append(hi << 4 | lo)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: false)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}
