import HeraldRuntime

/// `sms.fraud_guard.*`: pause sending to a region or number prefix whose conversion
/// (codes verified / codes sent) collapses, the mark of SMS pumping (docs/abuse.md).
public struct FraudGuardConfiguration: Sendable, Equatable {
    /// On by default (issue 34: off, 500 requests to random valid numbers from rotating IPs all
    /// went out in 5 s). Conversion needs the check API (``PhoneVerifier``, which herald-api and
    /// `HeraldVerification` use); a deployment that checks codes elsewhere sees 0 % conversion
    /// everywhere and must turn it off.
    public var enabled = true
    /// Sliding window, counted in one-minute buckets.
    public var windowMinutes = 60
    /// Codes a region must have sent in the window before its conversion is judged (0: regions not guarded).
    public var regionFloor = 200
    /// The same for a number prefix (0: prefixes not guarded).
    public var prefixFloor = 30
    /// Digits of a number (country code included) that make its prefix: 7 → `+1876555`.
    public var prefixDigits = 7
    /// Paused when verified / sent falls under this.
    public var minConversion = 0.1
    /// A scope's floor is at least this many times the codes it verifies in a usual window (the
    /// day before the window), so pausing a scope with users of its own costs an attacker a
    /// multiple of their traffic; 0: the configured floors alone.
    public var usualMultiple = 3.0
    /// Paused when more than this share of the window's sends were reported undelivered by their
    /// providers' receipts (docs/sms.md, "Delivery receipts"); 1: never for that.
    public var maxUndelivered = 0.5
    /// A pause ends by itself after this many seconds, doubled for each consecutive pause of the
    /// scope less than a day after the one before, up to `maxPauseSeconds`; 0: only
    /// `heraldctl fraud lift` ends it.
    public var pauseSeconds = 3600
    /// The longest a doubled pause lasts.
    public var maxPauseSeconds = 86_400
    /// After a pause ends (lifted, or run out) its scope's window, which still holds the burst, is
    /// not judged for this long: the requests let through since are, against the same floor and
    /// conversion (a budget), so a second burst right after the end is held again.
    public var liftGraceSeconds = 3600

    public init() {}

    public init(source: ConfigSource) throws {
        enabled = try source.bool("sms.fraud_guard.enabled", default: enabled)
        windowMinutes = try source.int("sms.fraud_guard.window_minutes", default: windowMinutes, range: 1...1440)
        regionFloor = try source.int("sms.fraud_guard.region_floor", default: regionFloor, range: 0...10_000_000)
        prefixFloor = try source.int("sms.fraud_guard.prefix_floor", default: prefixFloor, range: 0...10_000_000)
        prefixDigits = try source.int("sms.fraud_guard.prefix_digits", default: prefixDigits, range: 2...14)
        let conversion = try source.string("sms.fraud_guard.min_conversion", default: "\(minConversion)")
        guard let value = Double(conversion.trimmingCharacters(in: .whitespaces)), (0...1).contains(value) else {
            throw ConfigError(key: "sms.fraud_guard.min_conversion", reason: "must be a number from 0 to 1, got '\(conversion)'")
        }
        minConversion = value
        let multiple = try source.string("sms.fraud_guard.usual_multiple", default: "\(usualMultiple)")
        guard let times = Double(multiple.trimmingCharacters(in: .whitespaces)), (0...1000).contains(times) else {
            throw ConfigError(key: "sms.fraud_guard.usual_multiple", reason: "must be a number from 0 to 1000, got '\(multiple)'")
        }
        usualMultiple = times
        let undelivered = try source.string("sms.fraud_guard.max_undelivered", default: "\(maxUndelivered)")
        guard let share = Double(undelivered.trimmingCharacters(in: .whitespaces)), (0...1).contains(share) else {
            throw ConfigError(key: "sms.fraud_guard.max_undelivered", reason: "must be a number from 0 to 1, got '\(undelivered)'")
        }
        maxUndelivered = share
        pauseSeconds = try source.int("sms.fraud_guard.pause_seconds", default: pauseSeconds, range: 0...2_592_000)
        maxPauseSeconds = try source.int("sms.fraud_guard.max_pause_seconds", default: maxPauseSeconds, range: 1...2_592_000)
        if pauseSeconds > maxPauseSeconds {
            throw ConfigError(key: "sms.fraud_guard.max_pause_seconds", reason: "must be at least sms.fraud_guard.pause_seconds (\(pauseSeconds))")
        }
        liftGraceSeconds = try source.int("sms.fraud_guard.lift_grace_seconds", default: liftGraceSeconds, range: 0...2_592_000)
    }

    /// For `heraldctl config check`.
    public var effectiveValues: [String: Any] {
        ["sms.fraud_guard.enabled": enabled, "sms.fraud_guard.window_minutes": windowMinutes,
         "sms.fraud_guard.region_floor": regionFloor, "sms.fraud_guard.prefix_floor": prefixFloor,
         "sms.fraud_guard.prefix_digits": prefixDigits, "sms.fraud_guard.min_conversion": minConversion,
         "sms.fraud_guard.usual_multiple": usualMultiple,
         "sms.fraud_guard.max_undelivered": maxUndelivered,
         "sms.fraud_guard.pause_seconds": pauseSeconds == 0 ? "0 (until heraldctl fraud lift)" : "\(pauseSeconds)",
         "sms.fraud_guard.max_pause_seconds": maxPauseSeconds,
         "sms.fraud_guard.lift_grace_seconds": liftGraceSeconds]
    }
}
