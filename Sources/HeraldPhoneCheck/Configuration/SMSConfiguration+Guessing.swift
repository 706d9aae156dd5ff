import HeraldRuntime

extension SMSConfiguration {
    /// `sms.guessing.*`: wrong codes counted per number across codes and purposes (the runtime's
    /// ``GuessingPolicy``, as `email.code.guessing.*` per address). At `maxFailures` the number is
    /// locked: no code is sent (`locked_out`) and none is checked
    /// (``PhoneVerifier/Result/lockedOut(retryAfterSeconds:)``) for `lockoutSeconds`, doubled at
    /// each further lock up to `maxLockoutSeconds`. A success forgets them; so does a quiet
    /// `windowSeconds` after the last failure and the last lock.
    public typealias Guessing = GuessingPolicy

    /// `sms.guessing.*` and `sms.limits.ip.ipv6_prefix` with their effective values, and what
    /// the limits mean (for `heraldctl config check`).
    public var guessingAndIPValues: [String: Any] {
        guessing.effectiveValues(prefix: "sms.guessing").merging([
            "sms.limits.ip.ipv6_prefix": ipv6PrefixLength,
            "sms.policy.rate_limits": "each sms.limits.* passes at most max in any window_seconds (sliding: buckets of a tenth of the window, "
                + "a request may be refused up to one bucket early); IPv6 clients counted per /\(ipv6PrefixLength)",
            "sms.policy.guessing": "\(guessing.maxFailures) wrong codes per number and purpose (across codes, test numbers too) lock sending and checking "
                + "for \(guessing.lockoutSeconds) s, doubling per lock up to \(guessing.maxLockoutSeconds) s; a success or \(guessing.windowSeconds) s without a failure resets",
        ]) { current, _ in current }
    }

    /// `sms.limits.ip.ipv6_prefix`: IPv6 clients share one IP limit per network of this many
    /// bits (64: a subscriber's usual allocation; 128: per address).
    static func ipv6Prefix(_ source: ConfigSource, key: String) throws -> Int {
        try source.int(key, default: 64, range: 32...128)
    }
}
