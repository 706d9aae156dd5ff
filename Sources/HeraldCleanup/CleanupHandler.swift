import Foundation
import HeraldRuntime
import HeraldWire
import Logging

/// `herald-cleanup`'s handler of `cleanup.run`: joins the run named by the job (creating it
/// when the job did not come from `heraldctl cleanup schedule`) and works it with a
/// ``CleanupRunner`` until nothing is left for it. Every job of a run (a schedule publishes
/// `cleanup.fan_out` of them) adds a worker to the same run.
///
/// - dry run: records what a run would delete and purge (``CleanupReport``), deletes nothing;
/// - cleanup disabled: the run goes on, deleting only the accounts whose kept date is due;
/// - run cancelled (`heraldctl cleanup cancel`): the workers leave it after their batch;
/// - another run active: the job is rejected, no duplicate run starts;
/// - shutdown mid-run: a transient failure, so the job comes back (to this or another
///   worker) and the run goes on; a SIGKILL is the runner's usual takeover.
public struct CleanupHandler: JobHandler {
    /// A run deletes every eligible account, batch after batch: minutes, by design.
    public static var runsLong: Bool { true }

    public let configuration: CleanupConfiguration
    public let eventsExchange: String
    let metrics = CleanupMetrics()

    public init(configuration: CleanupConfiguration, eventsExchange: String) {
        self.configuration = configuration
        self.eventsExchange = eventsExchange
    }

    public init(configuration: HeraldConfiguration) {
        self.init(configuration: configuration.cleanup,
                  eventsExchange: HeraldTopology(configuration.amqp, configuration.runner).eventsExchange)
    }

    public func handle(_ job: CleanupRunJob, context: JobContext) async throws -> JobOutcome {
        do {
            return try await run(job, context: context)
        } catch let failure as JobFailure {
            throw failure
        } catch {
            metrics.failure()
            throw error
        }
    }

    private func run(_ job: CleanupRunJob, context: JobContext) async throws -> JobOutcome {
        var logger = context.logger
        logger[metadataKey: "run_id"] = "\(job.runID)"
        let runs = CleanupRunStore(client: context.database, logger: logger)
        let run: CleanupRun
        switch try await runs.create(id: job.runID, dryRun: job.dryRun ?? false, maxAccounts: configuration.maxAccountsPerRun, fanOut: 1) {
        case .created(let created), .exists(let created):
            run = created
        case .anotherActive(let other):
            metrics.run(outcome: "duplicate")
            return .rejected("another cleanup run is active (\(other.id))")
        }

        if run.dryRun {
            if run.status.isActive {
                let report = try await CleanupReport.make(client: context.database, configuration: configuration, logger: logger)
                try await runs.recordDryRun(run.id, report: report)
                logger.info("dry run", metadata: ["eligible": "\(report.eligible)"])
            }
            metrics.run(outcome: "dry_run")
            return .completed()
        }

        // Whether cleanup is enabled does not matter here: switched off, it gives no new dates,
        // but the accounts it dated before stay due (CleanupEligibility), and purges go on.
        guard let joined = try await runs.join(run.id), joined.status.isActive else {
            metrics.run(outcome: "ended")
            return .completed()
        }
        logger.info("working cleanup run", metadata: ["eligible_at_start": "\(joined.eligibleAtStart ?? 0)", "joins": "\(joined.joins)"])
        let runner = CleanupRunner(client: context.database, configuration: configuration, eventsExchange: eventsExchange, logger: logger)
        let ending = try await runner.work(runID: run.id)
        metrics.run(outcome: ending.rawValue)
        logger.info("left cleanup run", metadata: ["ending": "\(ending.rawValue)"])
        if ending == .interrupted {
            throw JobFailure.transient("worker stopping mid-run; the run goes on when the job comes back")
        }
        return .completed()
    }
}
