#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client's IP address as a job carries it (`client.ip`): an IPv4 or IPv6 literal, parsed
/// by the C library's `inet_pton` (no zone ids, no prefixes, no host names) and held in its
/// canonical form: an IPv6 form of an IPv4 address (`::ffff:192.0.2.1`, `::ffff:0:192.0.2.1`,
/// `64:ff9b::192.0.2.1`, `::192.0.2.1`) is the IPv4 address, and IPv6 is written lower-case
/// and compressed (RFC 5952, `inet_ntop`'s form).
///
/// Rate limits count an IPv4 address on its own and an IPv6 address by its network
/// (``limitKey(ipv6PrefixLength:)``): one subscriber is usually given a whole /64, and an
/// attacker rotating inside it is still one client.
public struct ClientIP: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable { case ipv4, ipv6 }

    public let family: Family
    /// 4 or 16 bytes, network order.
    public let bytes: [UInt8]

    /// Fails with a reason naming `field` (never the value) when `text` is not an IP literal.
    public init(_ text: String, field: String = "client.ip") throws(JobValidationError) {
        let failure = JobValidationError("\(field) must be an IPv4 or IPv6 address literal")
        // The longest literal, IPv6 with an embedded IPv4 (`ffff:…:255.255.255.255`), is 45 characters.
        guard (2...45).contains(text.utf8.count) else { throw failure }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(family: .ipv4, bytes: withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { throw failure }
        let raw = withUnsafeBytes(of: &v6) { Array($0) }
        if let v4 = Self.embeddedIPv4(raw) {
            self.init(family: .ipv4, bytes: v4)
        } else {
            self.init(family: .ipv6, bytes: raw)
        }
    }

    /// The IPv4 address an IPv6 form stands for, so that one client is one client however its
    /// address is written: IPv4-mapped `::ffff:a.b.c.d` (a dual-stack socket), SIIT's
    /// `::ffff:0:a.b.c.d` (RFC 6052 §2.1's predecessor, RFC 2765), NAT64's well-known prefix
    /// `64:ff9b::a.b.c.d` (RFC 6052) and the deprecated IPv4-compatible `::a.b.c.d` (RFC 4291
    /// §2.5.5.1; not `::` and `::1`, which are IPv6's own).
    static func embeddedIPv4(_ raw: [UInt8]) -> [UInt8]? {
        let tail = Array(raw[12..<16])
        let zeros = { (range: Range<Int>) in raw[range].allSatisfy { $0 == 0 } }
        if zeros(0..<10), raw[10] == 0xFF, raw[11] == 0xFF { return tail }
        if zeros(0..<8), raw[8] == 0xFF, raw[9] == 0xFF, zeros(10..<12) { return tail }
        if raw[0] == 0x00, raw[1] == 0x64, raw[2] == 0xFF, raw[3] == 0x9B, zeros(4..<12) { return tail }
        if zeros(0..<12), !(tail[0] == 0 && tail[1] == 0 && tail[2] == 0 && tail[3] <= 1) { return tail }
        return nil
    }

    private init(family: Family, bytes: [UInt8]) {
        self.family = family
        self.bytes = bytes
    }

    /// The canonical text: dotted IPv4, or compressed lower-case IPv6.
    public var description: String { Self.format(family, bytes) }

    /// What a rate limit counts: an IPv4 address itself; for IPv6, its network of
    /// `ipv6PrefixLength` bits written as `2001:db8:1:2::/64` (128: the address itself).
    public func limitKey(ipv6PrefixLength: Int) -> String {
        guard family == .ipv6, ipv6PrefixLength < 128 else { return description }
        let length = max(0, ipv6PrefixLength)
        var masked = bytes
        for index in 0..<16 {
            let bitsKept = min(8, max(0, length - index * 8))
            masked[index] &= bitsKept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bitsKept))
        }
        return "\(Self.format(.ipv6, masked))/\(length)"
    }

    private static func format(_ family: Family, _ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family == .ipv4 ? AF_INET : AF_INET6, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        precondition(written != nil, "inet_ntop failed on a parsed address")
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
