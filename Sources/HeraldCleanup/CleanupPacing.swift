import HeraldRuntime

/// `cleanup.pace.*`: how much of the database's time a cleanup worker may take, judged by
/// the duration of its own batches (the one latency it observes without asking anyone).
///
/// After each batch the worker pauses so that its batches fill at most `maxBusyPercent` of
/// its time: a batch of `d` is followed by a pause of `d × (100 − p) / p`. When the batch
/// took longer than `targetBatchMilliseconds` the database is busy (sign-ins, other work, or
/// cleanup itself contending for it), and the share shrinks in proportion: `p × target / d`.
/// So a loaded database makes cleanup slower rather than making sign-ins slower, and an idle
/// one lets it go at the share set here. `cleanup.rate_limit_per_second` stays the hard cap.
public struct CleanupPace: Sendable, Equatable {
    /// The largest share of its time a worker spends in batches, in percent; 100: no pause.
    public var maxBusyPercent: Int = 50
    /// A batch slower than this scales the share down by `target / duration`; 0: off.
    public var targetBatchMilliseconds: Int = 100
    /// No single pause is longer than this (bounds shutdown and the run's heartbeat).
    public var maxPauseMilliseconds: Int = 2_000

    public init() {}

    public init(maxBusyPercent: Int, targetBatchMilliseconds: Int, maxPauseMilliseconds: Int = 2_000) {
        self.maxBusyPercent = maxBusyPercent
        self.targetBatchMilliseconds = targetBatchMilliseconds
        self.maxPauseMilliseconds = maxPauseMilliseconds
    }

    /// Off: no pause whatever the batches take.
    public static let off = CleanupPace(maxBusyPercent: 100, targetBatchMilliseconds: 0)

    public var isOff: Bool { maxBusyPercent >= 100 && targetBatchMilliseconds == 0 }

    /// The share of its time a worker may spend in a batch that took `batch`, in (0, 1].
    public func share(after batch: Duration) -> Double {
        var share = Double(maxBusyPercent) / 100
        let target = Duration.milliseconds(targetBatchMilliseconds)
        if targetBatchMilliseconds > 0, batch > target {
            share *= target / batch
        }
        return min(1, share)
    }

    /// The pause after a batch that took `batch`: `batch × (1 − share) / share`, at most
    /// `maxPauseMilliseconds`.
    public func pause(after batch: Duration) -> Duration {
        guard batch > .zero else { return .zero }
        let share = share(after: batch)
        guard share < 1 else { return .zero }
        let pause = batch * ((1 - share) / share)
        return min(pause, .milliseconds(maxPauseMilliseconds))
    }

    init(source: ConfigSource) throws {
        let defaults = CleanupPace()
        maxBusyPercent = try source.int("cleanup.pace.max_busy_percent", default: defaults.maxBusyPercent, range: 1...100)
        targetBatchMilliseconds = try source.int("cleanup.pace.target_batch_ms", default: defaults.targetBatchMilliseconds, range: 0...60_000)
        maxPauseMilliseconds = try source.int("cleanup.pace.max_pause_ms", default: defaults.maxPauseMilliseconds, range: 10...10_000)
    }

    var effectiveValues: [String: Any] {
        ["cleanup.pace.max_busy_percent": maxBusyPercent, "cleanup.pace.target_batch_ms": targetBatchMilliseconds,
         "cleanup.pace.max_pause_ms": maxPauseMilliseconds]
    }
}

/// One worker's pacing state through a run: the pause owed after the last batch, and what it
/// paused in all (each batch's count in the run row adds the pause that preceded it).
struct CleanupPacer: Sendable {
    let pace: CleanupPace
    private(set) var owed: Duration = .zero
    private(set) var paused: Duration = .zero
    private(set) var batches = 0

    init(pace: CleanupPace) { self.pace = pace }

    /// Records a batch that did work and took `duration`; returns the pause it owes.
    @discardableResult
    mutating func took(_ duration: Duration) -> Duration {
        batches += 1
        owed = pace.pause(after: duration)
        return owed
    }

    /// Takes the owed pause (cancellable); returns it, for the next batch to report.
    mutating func pauseIfOwed() async throws -> Duration {
        let pause = owed
        owed = .zero
        guard pause > .zero else { return .zero }
        try await Task.sleep(for: pause)
        paused += pause
        return pause
    }
}
