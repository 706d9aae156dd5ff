import Foundation
import HeraldRuntime
import HeraldWire

/// Decides whether a job's action code settings may be put in a link: the continue URL's
/// host must be an authorized domain, the link domain a configured one, and the app ids
/// plain identifiers. The URL is judged by a strict parser of our own (not a lenient
/// browser-style one), so anything a browser might read differently is refused: userinfo
/// (`https://good.com@evil.com`), backslashes, percent-encoded or non-ASCII hosts,
/// trailing dots, control characters, schemes other than https (http only for localhost).
public struct EmailLinkPolicy: Sendable {
    public let authorizedDomains: [String]
    public let linkDomains: [String]
    public let defaultLinkDomain: String

    public init(authorizedDomains: [String], linkDomains: [String], defaultLinkDomain: String) {
        self.authorizedDomains = authorizedDomains.map { $0.lowercased() }
        self.linkDomains = linkDomains.map { $0.lowercased() }
        self.defaultLinkDomain = defaultLinkDomain.lowercased()
    }

    /// Why a setting is refused; the reason names the rule, never echoes the input.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
        init(_ reason: String) { self.reason = reason }
    }

    /// The settings that passed, as the link and the consume API use them.
    public struct Approved: Sendable, Equatable {
        public var continueURL: String
        public var continueHost: String
        public var linkDomain: String
    }

    public func approve(_ settings: EmailActionJob.ActionCodeSettings) throws(Refusal) -> Approved {
        let host = try Self.host(ofContinueURL: settings.url)
        guard authorizedDomains.contains(where: { Self.matches(host: host, rule: $0) }) else {
            throw Refusal("continue URL host is not an authorized domain")
        }
        let linkDomain: String
        if let requested = settings.linkDomain {
            let lowered = requested.lowercased()
            guard Self.isValidHost(lowered), linkDomains.contains(lowered) else {
                throw Refusal("link_domain is not a configured link domain")
            }
            linkDomain = lowered
        } else {
            linkDomain = defaultLinkDomain
        }
        if let id = settings.iosBundleID, !Self.isAppIdentifier(id) { throw Refusal("ios_bundle_id is not a bundle identifier") }
        if let id = settings.androidPackageName, !Self.isAppIdentifier(id) { throw Refusal("android_package_name is not a package name") }
        if let version = settings.androidMinimumVersion,
           !(1...64).contains(version.utf8.count) || !version.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) {
            throw Refusal("android_minimum_version must be letters, digits, '.', '_' or '-'")
        }
        return Approved(continueURL: settings.url, continueHost: host, linkDomain: linkDomain)
    }

    /// The lower-cased host of an absolute `https://` URL (`http://` only for localhost),
    /// or the reason it is refused.
    static func host(ofContinueURL url: String) throws(Refusal) -> String {
        guard (1...2048).contains(url.utf8.count) else { throw Refusal("continue URL must be 1 to 2048 bytes") }
        // Printable ASCII only: no controls, spaces, tabs or non-ASCII look-alikes anywhere.
        guard url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw Refusal("continue URL must be printable ASCII without spaces (IDN hosts in punycode)")
        }
        guard !url.contains("\\") else { throw Refusal("continue URL must not contain a backslash") }
        guard !url.contains(where: { "<>\"'`{}|^".contains($0) }) else {
            throw Refusal("continue URL contains a character URLs do not allow")
        }
        let lower = url.lowercased()
        let scheme: String
        if lower.hasPrefix("https://") { scheme = "https" } else if lower.hasPrefix("http://") { scheme = "http" } else {
            throw Refusal("continue URL scheme must be https")
        }
        let rest = url.dropFirst(scheme.count + 3)
        let authority = rest.prefix { !"/?#".contains($0) }
        guard !authority.isEmpty else { throw Refusal("continue URL has no host") }
        guard !authority.contains("@") else { throw Refusal("continue URL must not carry user info") }
        guard !authority.contains("%") else { throw Refusal("continue URL host must not be percent-encoded") }
        var host = Substring(authority)
        if let colon = authority.lastIndex(of: ":") {
            let port = authority[authority.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isNumber), let number = Int(port), (1...65535).contains(number) else {
                throw Refusal("continue URL port must be a number from 1 to 65535")
            }
            host = authority[..<colon]
        }
        let name = host.lowercased()
        guard isValidHost(name) else { throw Refusal("continue URL host is not a valid host name") }
        if scheme == "http", name != "localhost" { throw Refusal("continue URL scheme must be https") }
        // Percent signs in the rest must be well-formed escapes.
        let tail = Array(rest.dropFirst(authority.count).utf8)
        var i = 0
        while i < tail.count {
            if tail[i] == UInt8(ascii: "%") {
                guard i + 2 < tail.count, isHex(tail[i + 1]), isHex(tail[i + 2]) else {
                    throw Refusal("continue URL has a malformed percent escape")
                }
                i += 3
            } else {
                i += 1
            }
        }
        // Cross-check: Foundation must see the same host (no parser differential).
        guard let parsed = URLComponents(string: url), (parsed.encodedHost ?? parsed.host)?.lowercased() == name, parsed.user == nil, parsed.password == nil else {
            throw Refusal("continue URL is not a well-formed absolute URL")
        }
        return name
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// A DNS host name: dot-separated labels of letters, digits and inner hyphens, no empty
    /// label, no trailing dot, at most 253 bytes; lower case.
    public static func isValidHost(_ host: String) -> Bool {
        guard (1...253).contains(host.utf8.count) else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
        }
    }

    /// `host` or `*.domain`.
    static func isValidDomainRule(_ rule: String) -> Bool {
        rule.hasPrefix("*.") ? isValidHost(String(rule.dropFirst(2))) && rule.dropFirst(2).contains(".") : isValidHost(rule)
    }

    /// Exact host, or a subdomain of `domain` for `*.domain` (not the domain itself).
    static func matches(host: String, rule: String) -> Bool {
        if rule.hasPrefix("*.") {
            let domain = rule.dropFirst(2)
            return host.hasSuffix("." + domain) && host.count > domain.count + 1
        }
        return host == rule
    }

    /// Reverse-DNS app identifier: two or more dot-separated parts of letters, digits, `_`, `-`.
    static func isAppIdentifier(_ id: String) -> Bool {
        guard (3...255).contains(id.utf8.count) else { return false }
        let parts = id.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2 && parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        }
    }
}
