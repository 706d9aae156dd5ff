import Foundation
import HeraldRuntime
import Synchronization

/// A token bucket per API key (or per source address, for the receipt callbacks), in this
/// replica: `perSecond` requests a second, `burst` at once. N replicas allow N times the rate;
/// the workers' own limits (per number, IP, region) are counted in PostgreSQL across all of
/// them. At most `maxKeys` buckets are kept: past that, the full ones (a bucket refilled is the
/// same as none) are forgotten, then the longest untouched, down to three quarters of
/// `maxKeys` — a flood of new keys never empties the buckets of the keys it floods alongside.
final class KeyRateLimiter: Sendable {
    private struct Bucket { var tokens: Double; var at: ContinuousClock.Instant }
    private let state = Mutex([String: Bucket]())
    private let perSecond: Double
    private let burst: Double
    private let clock = ContinuousClock()
    private let maxKeys: Int

    init(perSecond: Int, burst: Int, maxKeys: Int = 100_000) {
        self.perSecond = Double(perSecond)
        self.burst = Double(max(burst, 1))
        self.maxKeys = maxKeys
    }

    /// The seconds until `key` has a token again, nil when it has one now; takes nothing.
    func wait(_ key: String) -> Int? {
        let now = clock.now
        return state.withLock { buckets in
            guard let bucket = buckets[key] else { return nil }
            let tokens = min(burst, bucket.tokens + (now - bucket.at).seconds * perSecond)
            return tokens >= 1 ? nil : max(1, Int(((1 - tokens) / perSecond).rounded(.up)))
        }
    }

    /// Takes one request's token; nil when taken, else the seconds until one is there.
    func take(_ key: String) -> Int? {
        let now = clock.now
        return state.withLock { buckets in
            if buckets[key] == nil, buckets.count >= maxKeys { forgetFull(&buckets, now: now) }
            var bucket = buckets[key] ?? Bucket(tokens: burst, at: now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.at).seconds * perSecond)
            bucket.at = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }

    /// Drops the buckets that have refilled by `now`; then, if too many are left, the longest
    /// untouched down to three quarters of `maxKeys` (rare: once per quarter of `maxKeys` new keys).
    private func forgetFull(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant) {
        let (perSecond, burst) = (perSecond, burst)
        buckets = buckets.filter { $0.value.tokens + (now - $0.value.at).seconds * perSecond < burst }
        guard buckets.count >= maxKeys else { return }
        let oldest = buckets.sorted { $0.value.at < $1.value.at }.prefix(buckets.count - maxKeys * 3 / 4)
        for (key, _) in oldest { buckets[key] = nil }
    }
}
