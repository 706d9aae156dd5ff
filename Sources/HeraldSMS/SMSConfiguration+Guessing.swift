import HeraldRuntime

extension SMSConfiguration {
    /// `sms.guessing.*`: wrong codes counted per number across codes and purposes (NIST SP
    /// 800-63B limits consecutive failed attempts per subscriber). At `maxFailures` the number is locked: no code
    /// is sent (`locked_out`) and none is checked (``PhoneVerifier/Result/lockedOut(retryAfterSeconds:)``)
    /// for `lockoutSeconds`, doubled at each further lock up to `maxLockoutSeconds`. A success
    /// forgets them; so does a quiet `windowSeconds` after the last failure and the last lock.
    public struct Guessing: Sendable, Equatable {
        public var maxFailures = 10
        public var windowSeconds = 86_400
        public var lockoutSeconds = 3600
        public var maxLockoutSeconds = 86_400

        public init() {}

        static func read(_ source: ConfigSource) throws -> Guessing {
            var guessing = Guessing()
            guessing.maxFailures = try source.int("sms.guessing.max_failures", default: guessing.maxFailures, range: 1...100)
            guessing.windowSeconds = try source.int("sms.guessing.window_seconds", default: guessing.windowSeconds, range: 60...2_592_000)
            guessing.lockoutSeconds = try source.int("sms.guessing.lockout_seconds", default: guessing.lockoutSeconds, range: 1...2_592_000)
            guessing.maxLockoutSeconds = try source.int("sms.guessing.max_lockout_seconds", default: guessing.maxLockoutSeconds, range: 1...2_592_000)
            guard guessing.maxLockoutSeconds >= guessing.lockoutSeconds else {
                throw ConfigError(key: "sms.guessing.max_lockout_seconds", reason: "must be at least sms.guessing.lockout_seconds (\(guessing.lockoutSeconds))")
            }
            return guessing
        }
    }

    /// `sms.guessing.*` and `sms.limits.ip.ipv6_prefix` with their effective values, and what
    /// the limits mean (for `heraldctl config check`).
    public var guessingAndIPValues: [String: Any] {
        [
            "sms.guessing.max_failures": guessing.maxFailures, "sms.guessing.window_seconds": guessing.windowSeconds,
            "sms.guessing.lockout_seconds": guessing.lockoutSeconds, "sms.guessing.max_lockout_seconds": guessing.maxLockoutSeconds,
            "sms.limits.ip.ipv6_prefix": ipv6PrefixLength,
            "sms.policy.rate_limits": "each sms.limits.* passes at most max in any window_seconds (sliding: buckets of a tenth of the window, "
                + "a request may be refused up to one bucket early); IPv6 clients counted per /\(ipv6PrefixLength)",
            "sms.policy.guessing": "\(guessing.maxFailures) wrong codes per number and purpose (across codes, test numbers too) lock sending and checking "
                + "for \(guessing.lockoutSeconds) s, doubling per lock up to \(guessing.maxLockoutSeconds) s; a success or \(guessing.windowSeconds) s without a failure resets",
        ]
    }

    /// `sms.limits.ip.ipv6_prefix`: IPv6 clients share one IP limit per network of this many
    /// bits (64: a subscriber's usual allocation; 128: per address).
    static func ipv6Prefix(_ source: ConfigSource, key: String) throws -> Int {
        try source.int(key, default: 64, range: 32...128)
    }
}
