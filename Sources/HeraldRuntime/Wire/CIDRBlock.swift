/// An IP network (`10.0.0.0/8`, `fd00::/8`) or one address: herald-api's trusted proxies.
public struct CIDRBlock: Sendable, Hashable {
    public let network: ClientIP
    public let prefixLength: Int

    /// `address` or `address/length`; nil when it is neither.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = try? ClientIP(String(parts[0])) else { return nil }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...maximum).contains(given) else { return nil }
            length = given
        }
        network = address
        prefixLength = length
    }

    /// 127.0.0.0/8 and ::1: this host.
    public static let loopback = [CIDRBlock("127.0.0.0/8"), CIDRBlock("::1")].compactMap { $0 }

    public func contains(_ ip: ClientIP) -> Bool {
        guard ip.family == network.family else { return false }
        var left = prefixLength
        for index in 0..<ip.bytes.count where left > 0 {
            let bits = min(8, left)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if ip.bytes[index] & mask != network.bytes[index] & mask { return false }
            left -= bits
        }
        return true
    }
}
