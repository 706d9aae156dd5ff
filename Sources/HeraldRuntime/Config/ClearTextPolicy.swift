import Foundation

/// "No clear text to remote hosts": provider URLs with `http://`, SMTP without TLS and Kannel
/// may point only at loopback (127.0.0.0/8, ::1, `localhost`) unless the channel's
/// `<channel>.allow_insecure_transport` is true (docs/configuration.md). Checked at start, so a
/// worker that would send codes, links or credentials in clear exits 78 naming the key.
public enum ClearTextPolicy {
    /// 127.0.0.0/8, ::1 (any spelling, brackets allowed) or `localhost`.
    public static func isLoopback(_ host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "localhost." { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        var loopback = in6addr_loopback
        return inet_pton(AF_INET6, host, &v6) == 1 && memcmp(&v6, &loopback, MemoryLayout<in6_addr>.size) == 0
    }

    /// Refuses an `http://` URL to a host that is not loopback, unless `allowed`. `key` is the
    /// URL's key, `allowKey` the switch that would permit it; the error names both.
    public static func check(url: String, key: String, allowed: Bool, allowKey: String) throws(ConfigError) {
        guard url.lowercased().hasPrefix("http://"), !allowed else { return }
        let host = URL(string: url)?.host ?? ""
        guard isLoopback(host) else {
            throw ConfigError(key: key, reason: "http:// to a host other than loopback sends secrets in clear; use https:// or set \(allowKey): true")
        }
    }

    /// Refuses a clear-text connection (SMTP without TLS) to `host` unless it is loopback or `allowed`.
    public static func check(host: String, key: String, allowed: Bool, allowKey: String) throws(ConfigError) {
        guard !allowed, !isLoopback(host) else { return }
        throw ConfigError(key: key, reason: "no TLS to a host other than loopback sends secrets in clear; use TLS or set \(allowKey): true")
    }
}
