import Foundation
import HeraldRuntime
import Logging
import PostgresNIO
import ServiceLifecycle

/// Works through one cleanup run alongside any number of other runners on the same run (each
/// a `cleanup.run` job of a herald-cleanup worker: `cleanup.fan_out` of them).
///
/// Accounts go in batches: each batch is one short transaction that locks up to
/// `batch_size` eligible accounts (`FOR UPDATE SKIP LOCKED`, so workers never wait for each
/// other and a sign-in waits at most for one batch), deletes them, writes one
/// `account.deleted` event per account to the event outbox, and adds the count to the run,
/// refusing to pass the per-run cap or to count for a cancelled run (then the batch rolls
/// back). A crash loses only the open batch, which rolls back; whoever works the run next
/// finds those accounts again. When nothing eligible is left, the purge targets follow in
/// the same way, and the worker that finds nothing left at all completes the run.
///
/// Between batches the worker pauses by ``CleanupPace`` (`cleanup.pace.*`): each batch's own
/// duration sets the pause after it, so cleanup takes a bounded share of the database and
/// less of it when the database is slow; the next batch adds the pause to the run's
/// `paused_ms`. `cleanup.rate_limit_per_second` caps the rows per second on top.
public struct CleanupRunner: Sendable {
    public let client: PostgresClient
    public let configuration: CleanupConfiguration
    /// Where `account.deleted` goes (`herald.events` in the default namespace).
    public let eventsExchange: String
    public let logger: Logger
    let metrics = CleanupMetrics()

    public init(client: PostgresClient, configuration: CleanupConfiguration, eventsExchange: String, logger: Logger) {
        self.client = client
        self.configuration = configuration
        self.eventsExchange = eventsExchange
        self.logger = logger
    }

    /// How this worker's part of a run ended.
    public enum Ending: String, Sendable {
        /// It found nothing left and completed the run.
        case completed
        /// The per-run cap was reached.
        case capped
        /// The run was cancelled (`heraldctl cleanup cancel`).
        case cancelled
        /// Another worker ended the run.
        case ended
        /// The process is shutting down (or the task was cancelled); the run goes on elsewhere.
        case interrupted
    }

    /// The batch's run-row update found the run cancelled or the cap passed: roll back.
    struct BatchRefused: Error {}

    /// Works the run until it ends for this worker. The run must have been joined.
    public func work(runID: String) async throws -> Ending {
        let runs = CleanupRunStore(client: client, logger: logger)
        var limiter = RateLimiter(perSecond: configuration.rateLimitPerSecond)
        var pacer = CleanupPacer(pace: configuration.pace)
        metrics.working.increment()
        defer { metrics.working.decrement() }

        // Accounts.
        var lockedSince: ContinuousClock.Instant?
        while true {
            // The pause first: a cancel or a shutdown during it is seen before the next batch.
            let paused = try await pacer.pauseIfOwed()
            if Task.isCancelledOrShuttingDown { return .interrupted }
            guard let run = try await runs.get(runID) else { throw CleanupError.unknownRun(runID) }
            if let ending = Self.ending(of: run) { return ending }
            let remaining = run.maxAccounts - run.accountsDeleted
            if remaining <= 0 {
                try await runs.finish(runID, status: .completed, reason: "per-run cap of \(run.maxAccounts) accounts reached")
                return .capped
            }
            try await limiter.wait()
            let started = ContinuousClock.now
            guard let deleted = try await deleteBatch(runID: runID, limit: min(configuration.batchSize, remaining), paused: paused) else { continue }
            let took = ContinuousClock.now - started
            metrics.batch(took)
            if deleted > 0 {
                metrics.deleted(deleted)
                metrics.paused(pacer.took(took))
                limiter.took(deleted)
                lockedSince = nil
                continue
            }
            // Nothing this worker could lock: done, or the rest is locked by a batch of another
            // worker or a sign-in. Look without locking.
            guard try await anyEligible() else { break }
            let since = lockedSince ?? .now
            lockedSince = since
            if ContinuousClock.now - since > .seconds(configuration.lockedGiveUpSeconds) {
                logger.info("eligible accounts stayed locked; leaving them to the next run", metadata: ["run_id": "\(runID)"])
                break
            }
            try await Task.sleep(for: .milliseconds(configuration.lockedRetryMilliseconds))
        }

        // Expired rows of the purge targets. The day-partitioned tables first get their coming
        // days (a run is their daily upkeep), then lose the days past retention, whole.
        try await ensureDays()
        for target in PurgeTarget.registry(configuration) where target.retentionDays > 0 {
            if target.byDay {
                guard try await dropDays(target, runID: runID) != nil else {
                    guard let run = try await runs.get(runID) else { throw CleanupError.unknownRun(runID) }
                    return Self.ending(of: run) ?? .ended
                }
                continue
            }
            while true {
                let paused = try await pacer.pauseIfOwed()
                if Task.isCancelledOrShuttingDown { return .interrupted }
                try await limiter.wait()
                let started = ContinuousClock.now
                guard let purged = try await purgeBatch(target, runID: runID, paused: paused) else {
                    guard let run = try await runs.get(runID) else { throw CleanupError.unknownRun(runID) }
                    return Self.ending(of: run) ?? .ended
                }
                guard purged > 0 else { break }
                metrics.purged(purged, target: target.name)
                metrics.paused(pacer.took(.now - started))
                limiter.took(purged)
            }
        }

        try await runs.finish(runID, status: .completed, reason: nil)
        guard let run = try await runs.get(runID) else { throw CleanupError.unknownRun(runID) }
        return run.status == .cancelled ? .cancelled : .completed
    }

    /// nil while the run is active; otherwise how this worker's part ended.
    static func ending(of run: CleanupRun) -> Ending? {
        switch run.status {
        case .scheduled, .running: nil
        case .cancelled: .cancelled
        case .completed, .failed: .ended
        }
    }
}
