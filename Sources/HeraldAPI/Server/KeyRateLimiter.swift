import Foundation
import HeraldRuntime
import Synchronization

/// A token bucket per API key, in this replica: `perSecond` requests a second, `burst` at once.
/// N replicas allow N times the rate; the workers' own limits (per number, IP, region) are
/// counted in PostgreSQL across all of them.
final class KeyRateLimiter: Sendable {
    private struct Bucket { var tokens: Double; var at: ContinuousClock.Instant }
    private let state = Mutex([String: Bucket]())
    private let perSecond: Double
    private let burst: Double
    private let clock = ContinuousClock()

    init(perSecond: Int, burst: Int) {
        self.perSecond = Double(perSecond)
        self.burst = Double(max(burst, 1))
    }

    /// Takes one request's token; nil when taken, else the seconds until one is there.
    func take(_ key: String) -> Int? {
        let now = clock.now
        return state.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, at: now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.at).seconds * perSecond)
            bucket.at = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }
}
