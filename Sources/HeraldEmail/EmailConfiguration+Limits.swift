import HeraldRuntime

extension EmailConfiguration {
    /// `email.limits.*`: how many action emails may go out, per address, per recipient domain
    /// (but the large mailbox providers of `domain.exempt`), per client IP (IPv6 per network of
    /// `ipv6_prefix` bits) and in all, in sliding windows (`herald.email_rate_take`,
    /// `SQL/functions/email_rate_take.sql`). Every new request counts, whatever its mode and
    /// whether or not the address has an account, so a refusal
    /// (`rate_limited:email_address|email_domain|ip|global`) looks the same for both.
    public struct Limits: Sendable, Equatable {
        /// Mail bombing of one address.
        public var address = RateLimit(max: 5, windowSeconds: 3600)
        /// Many addresses of one domain (from many clients): a mailbox provider that sees a burst
        /// to its users from one sender marks it, and the sender domain's reputation goes with it.
        public var domain = RateLimit(max: 200, windowSeconds: 3600)
        /// Domains the domain limit leaves out: mailbox providers with millions of users, where
        /// one domain is no unit of abuse (the address and IP limits still apply). Exact names.
        public var domainExempt: Set<String> = Limits.largeMailboxProviders
        /// One client spraying many addresses (requests without `client.ip` have no IP limit).
        public var ip = RateLimit(max: 50, windowSeconds: 3600)
        /// The sender domain's reputation and the provider's quota.
        public var global = RateLimit(max: 100_000, windowSeconds: 3600)
        public var ipv6PrefixLength = 64

        public init() {}

        static func read(_ source: ConfigSource) throws -> Limits {
            var limits = Limits()
            limits.address = try limit(source, "address", limits.address)
            limits.domain = try limit(source, "domain", limits.domain)
            let exempt = try source.stringList("email.limits.domain.exempt", default: limits.domainExempt.sorted())
            if let bad = exempt.first(where: { $0.isEmpty || $0.contains("@") || $0.contains(where: \.isWhitespace) || $0 != $0.lowercased() }) {
                throw ConfigError(key: "email.limits.domain.exempt", reason: "every entry must be a lower-case domain name (gmail.com), got '\(bad)'")
            }
            limits.domainExempt = Set(exempt)
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
            if let at = email.lastIndex(of: "@") {
                let domain = email[email.index(after: at)...].lowercased()
                if !domainExempt.contains(domain) { limits.add("email_domain", key: domain, self.domain) }
            }
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
                "email.limits.domain.exempt": domainExempt.sorted(),
                "email.policy.limits": "at most \(address.max) per address per \(address.windowSeconds) s, \(domain.max) per recipient domain per "
                    + "\(domain.windowSeconds) s (\(domainExempt.count) large providers exempt), \(ip.max) per client IP (IPv6 per /\(ipv6PrefixLength)) "
                    + "per \(ip.windowSeconds) s, \(global.max) in all per \(global.windowSeconds) s; sliding windows; counted for every new request, "
                    + "with or without an account",
            ]
            for (name, limit) in [("address", address), ("domain", domain), ("ip", ip), ("global", global)] {
                values["email.limits.\(name).max"] = limit.max
                values["email.limits.\(name).window_seconds"] = limit.windowSeconds
            }
            return values
        }

        /// The default `email.limits.domain.exempt`: the largest consumer mailbox providers.
        public static let largeMailboxProviders: Set<String> = [
            "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com", "ymail.com",
            "icloud.com", "me.com", "mac.com", "aol.com", "proton.me", "protonmail.com", "gmx.com", "gmx.de", "gmx.net", "web.de",
            "t-online.de", "mail.ru", "yandex.ru", "qq.com", "163.com", "126.com", "naver.com", "orange.fr", "free.fr", "libero.it",
        ]
    }
}
