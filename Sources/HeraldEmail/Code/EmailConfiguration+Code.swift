import HeraldRuntime

extension EmailConfiguration {
    /// `email.code.*`: one-time codes mailed by `email.code` jobs, with the SMS codes' rules: a
    /// numeric code of `length` digits from the CSPRNG, stored only as its keyed hash, valid for
    /// `ttlSeconds`, dead after `maxAttempts` wrong tries, one pending per (address, purpose), a
    /// request inside `resendIntervalSeconds` answered by the code just mailed (unless
    /// `force_resend`), and wrong codes counted per address toward a lockout (`guessing`).
    public struct Code: Sendable, Equatable {
        public var length = 6
        public var ttlSeconds = 600
        public var maxAttempts = 5
        public var resendIntervalSeconds = 30
        public var guessing = GuessingPolicy()

        public init() {}

        static func read(_ source: ConfigSource) throws -> Code {
            var code = Code()
            code.length = try source.int("email.code.length", default: code.length, range: 4...10)
            code.ttlSeconds = try source.int("email.code.ttl_seconds", default: code.ttlSeconds, range: 60...86_400)
            code.maxAttempts = try source.int("email.code.max_attempts", default: code.maxAttempts, range: 1...20)
            code.resendIntervalSeconds = try source.int("email.code.resend_interval_seconds", default: code.resendIntervalSeconds, range: 0...3600)
            code.guessing = try GuessingPolicy.read(source, prefix: "email.code.guessing")
            return code
        }

        /// For `heraldctl config check`.
        var effectiveValues: [String: Any] {
            var values: [String: Any] = [
                "email.code.length": length, "email.code.ttl_seconds": ttlSeconds, "email.code.max_attempts": maxAttempts,
                "email.code.resend_interval_seconds": resendIntervalSeconds,
                "email.policy.code_guessing": "\(guessing.maxFailures) wrong codes per address (across codes and purposes) lock sending and checking "
                    + "for \(guessing.lockoutSeconds) s, doubling per lock up to \(guessing.maxLockoutSeconds) s; a success or \(guessing.windowSeconds) s without a failure resets",
            ]
            values.merge(guessing.effectiveValues(prefix: "email.code.guessing")) { current, _ in current }
            return values
        }
    }
}
