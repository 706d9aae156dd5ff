import HeraldRuntime

extension EmailConfiguration {
    /// `email.limits.*`: how many action emails may go out, per address, per client IP (IPv6
    /// per network of `ipv6_prefix` bits) and in all, in sliding windows (`herald.email_rate_take`, `SQL/functions/email_rate_take.sql`). Every
    /// new request counts, whatever its mode and whether or not the address has an account, so
    /// a refusal (`rate_limited:email_address|ip|global`) looks the same for both.
    public struct Limits: Sendable, Equatable {
        /// Mail bombing of one address.
        public var address = RateLimit(max: 5, windowSeconds: 3600)
        /// One client spraying many addresses (requests without `client.ip` have no IP limit).
        public var ip = RateLimit(max: 50, windowSeconds: 3600)
        /// The sender domain's reputation and the provider's quota.
        public var global = RateLimit(max: 100_000, windowSeconds: 3600)
        public var ipv6PrefixLength = 64

        public init() {}

        static func read(_ source: ConfigSource) throws -> Limits {
            var limits = Limits()
            limits.address = try limit(source, "address", limits.address)
            limits.ip = try limit(source, "ip", limits.ip)
            limits.global = try limit(source, "global", limits.global)
            limits.ipv6PrefixLength = try source.int("email.limits.ip.ipv6_prefix", default: limits.ipv6PrefixLength, range: 32...128)
            return limits
        }

        private static func limit(_ source: ConfigSource, _ name: String, _ fallback: RateLimit) throws -> RateLimit {
            RateLimit(max: try source.int("email.limits.\(name).max", default: fallback.max, range: 0...100_000_000),
                      windowSeconds: try source.int("email.limits.\(name).window_seconds", default: fallback.windowSeconds, range: 1...2_592_000))
        }

        /// The limits of a request to `email` (normal form) from `ip` (validated by the job).
        public func rateLimits(email: String, ip: String?) -> RateLimits {
            var limits = RateLimits()
            limits.add("email_address", key: email.lowercased(), address)
            if let client = ip.flatMap({ try? ClientIP($0) }) {
                limits.add("ip", key: client.limitKey(ipv6PrefixLength: ipv6PrefixLength), self.ip)
            }
            limits.add("global", key: "", global)
            return limits
        }

        /// For `heraldctl config check`.
        var effectiveValues: [String: Any] {
            var values: [String: Any] = [
                "email.limits.ip.ipv6_prefix": ipv6PrefixLength,
                "email.policy.limits": "at most \(address.max) per address per \(address.windowSeconds) s, \(ip.max) per client IP (IPv6 per /\(ipv6PrefixLength)) "
                    + "per \(ip.windowSeconds) s, \(global.max) in all per \(global.windowSeconds) s; sliding windows; counted for every new request, "
                    + "with or without an account",
            ]
            for (name, limit) in [("address", address), ("ip", ip), ("global", global)] {
                values["email.limits.\(name).max"] = limit.max
                values["email.limits.\(name).window_seconds"] = limit.windowSeconds
            }
            return values
        }
    }
}
