/// How wrong codes count toward a lockout of the subscriber they were sent to (NIST SP 800-63B
/// limits consecutive failed attempts per subscriber), under a key prefix of the configuration:
/// at `maxFailures` wrong codes (across codes and purposes) nothing is sent to it and nothing is
/// checked for `lockoutSeconds`, doubled at each further lock up to `maxLockoutSeconds`; a
/// success forgets them, and so does a quiet `windowSeconds` after the last failure and lock.
/// `sms.guessing.*` (per number) and `email.code.guessing.*` (per address) read it.
public struct GuessingPolicy: Sendable, Equatable {
    public var maxFailures = 10
    public var windowSeconds = 86_400
    public var lockoutSeconds = 3600
    public var maxLockoutSeconds = 86_400

    public init() {}

    /// `<prefix>.max_failures`, `.window_seconds`, `.lockout_seconds`, `.max_lockout_seconds`,
    /// each error naming its key.
    public static func read(_ source: ConfigSource, prefix: String, defaults: GuessingPolicy = GuessingPolicy()) throws -> GuessingPolicy {
        var policy = defaults
        policy.maxFailures = try source.int("\(prefix).max_failures", default: policy.maxFailures, range: 1...100)
        policy.windowSeconds = try source.int("\(prefix).window_seconds", default: policy.windowSeconds, range: 60...2_592_000)
        policy.lockoutSeconds = try source.int("\(prefix).lockout_seconds", default: policy.lockoutSeconds, range: 1...2_592_000)
        policy.maxLockoutSeconds = try source.int("\(prefix).max_lockout_seconds", default: policy.maxLockoutSeconds, range: 1...2_592_000)
        guard policy.maxLockoutSeconds >= policy.lockoutSeconds else {
            throw ConfigError(key: "\(prefix).max_lockout_seconds", reason: "must be at least \(prefix).lockout_seconds (\(policy.lockoutSeconds))")
        }
        return policy
    }

    /// The keys under `prefix` with their effective values (for `heraldctl config check`).
    public func effectiveValues(prefix: String) -> [String: Any] {
        ["\(prefix).max_failures": maxFailures, "\(prefix).window_seconds": windowSeconds,
         "\(prefix).lockout_seconds": lockoutSeconds, "\(prefix).max_lockout_seconds": maxLockoutSeconds]
    }
}
