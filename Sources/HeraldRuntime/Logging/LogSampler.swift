import Synchronization

/// Lets at most `burst` lines of one kind through per `interval`; the rest are left out and
/// counted, and the next line let through says how many. For lines a flood can repeat
/// thousands of times a second (a queue full of malformed messages), where a line per
/// message costs the worker more than the message itself and tells an operator nothing the
/// first lines and the metrics do not. Whatever is left out of the log stays counted in the
/// metrics and, for dead letters, in the dead-letter queue with its reason.
public final class LogSampler: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var logged = 0
        var omitted = 0
    }

    public let burst: Int
    public let interval: Duration
    private let window: Mutex<Window>

    public init(burst: Int = 20, interval: Duration = .seconds(10), now: ContinuousClock.Instant = .now) {
        self.burst = burst
        self.interval = interval
        window = Mutex(Window(start: now))
    }

    /// nil: leave this line out. Otherwise log it, saying how many were left out since the
    /// last line let through (0: none).
    public func admit(at now: ContinuousClock.Instant = .now) -> Int? {
        window.withLock { window in
            if now - window.start >= interval {
                window.start = now
                window.logged = 0
            }
            guard window.logged < burst else {
                window.omitted += 1
                return nil
            }
            window.logged += 1
            defer { window.omitted = 0 }
            return window.omitted
        }
    }
}
