/// A rate limit: at most `max` requests in any `windowSeconds` (counted in sliding windows by `herald.sms_rate_take` and `herald.email_rate_take`: `Sources/HeraldPhone/SQL/functions/sms_rate_take.sql`).
public struct RateLimit: Sendable, Equatable {
    public var max: Int
    public var windowSeconds: Int
    public init(max: Int, windowSeconds: Int) {
        self.max = max
        self.windowSeconds = windowSeconds
    }
}

/// The rate limits of one request, checked in this order (the first full one is the reason).
/// Scopes are distinct; `global` is special: its counter is sharded and its key ignored.
public struct RateLimits: Sendable, Equatable {
    public var scopes: [String] = []
    public var keys: [String] = []
    public var windows: [Int] = []
    public var maxes: [Int] = []

    public init() {}

    public mutating func add(_ scope: String, key: String, _ limit: RateLimit) {
        scopes.append(scope)
        keys.append(key)
        windows.append(limit.windowSeconds)
        maxes.append(limit.max)
    }

    /// When a request refused by `scope` (`rate_limited:<scope>`) may pass again: the limits are
    /// sliding windows of ten buckets, so the earliest is when the oldest bucket leaves the window
    /// (a tenth of it); a retry then may still find it full. Nil for a scope not here.
    public func retryAfterSeconds(refusedBy reason: String) -> Int? {
        guard reason.hasPrefix("rate_limited:"), let index = scopes.firstIndex(of: String(reason.dropFirst("rate_limited:".count))) else { return nil }
        return max(windows[index] / 10, 1)
    }
}
