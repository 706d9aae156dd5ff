import HeraldRuntime
/// Spaces out work to at most `perSecond` rows per second (0: no limit), per worker.
struct RateLimiter: Sendable {
    let perSecond: Int
    private var nextFree = ContinuousClock.now

    init(perSecond: Int) { self.perSecond = perSecond }

    /// Waits until the rows done so far are within the rate.
    func wait() async throws {
        guard perSecond > 0 else { return }
        let now = ContinuousClock.now
        if nextFree > now { try await Task.sleep(until: nextFree, clock: .continuous) }
    }

    /// Counts `rows` done.
    mutating func took(_ rows: Int) {
        guard perSecond > 0, rows > 0 else { return }
        let now = ContinuousClock.now
        nextFree = max(nextFree, now) + .nanoseconds(Int64(rows) * 1_000_000_000 / Int64(perSecond))
    }
}
