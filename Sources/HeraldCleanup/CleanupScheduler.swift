import Foundation
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// What `heraldctl cleanup schedule` does, for any caller that can publish a job: insert the
/// run (at most one active, by a unique index), then publish `fan_out` `cleanup.run` jobs
/// for it. A stale active run (no batch for `stale_after_seconds`: its workers died or its
/// jobs were dead-lettered) is resumed instead: its jobs are published again.
public struct CleanupScheduler: Sendable {
    public typealias Publish = @Sendable (_ job: CleanupRunJob, _ messageID: String) async throws -> Void

    public let client: PostgresClient
    public let configuration: CleanupConfiguration
    public let logger: Logger

    public init(client: PostgresClient, configuration: CleanupConfiguration, logger: Logger) {
        self.client = client
        self.configuration = configuration
        self.logger = logger
    }

    public enum Result: Sendable, Equatable {
        case scheduled(CleanupRun)
        /// A stale active run was published again.
        case resumed(CleanupRun)
        /// A run is active and making progress: nothing was published.
        case alreadyActive(CleanupRun)

        public var run: CleanupRun {
            switch self {
            case .scheduled(let run), .resumed(let run), .alreadyActive(let run): run
            }
        }

        public var name: String {
            switch self {
            case .scheduled: "scheduled"
            case .resumed: "resumed"
            case .alreadyActive: "already_active"
            }
        }
    }

    /// Schedules a run (a dry run never conflicts with an active run), whether cleanup is
    /// enabled or not: switched off, it gives no new dates, but a run still deletes the
    /// accounts whose kept date is due, and purges.
    public func schedule(runID: String = CleanupScheduler.newRunID(), dryRun: Bool = false, fanOut: Int? = nil, publish: Publish) async throws -> Result {
        let fanOut = dryRun ? 1 : (fanOut ?? configuration.fanOut)
        let runs = CleanupRunStore(client: client, logger: logger)
        switch try await runs.create(id: runID, dryRun: dryRun, maxAccounts: configuration.maxAccountsPerRun, fanOut: fanOut) {
        case .created(let run):
            do {
                try await publishJobs(run, count: fanOut, suffix: "", publish: publish)
            } catch {
                try? await runs.finish(run.id, status: .failed, reason: "its jobs could not be published")
                throw error
            }
            return .scheduled(run)
        case .exists(let run), .anotherActive(let run):
            guard run.status.isActive else { return .alreadyActive(run) }
            guard run.heartbeatAt < Date().addingTimeInterval(-Double(configuration.staleAfterSeconds)) else { return .alreadyActive(run) }
            logger.warning("resuming a stale cleanup run", metadata: ["run_id": "\(run.id)"])
            try await publishJobs(run, count: max(run.fanOut, fanOut), suffix: ".r\(Int(Date().timeIntervalSince1970))", publish: publish)
            return .resumed(run)
        }
    }

    private func publishJobs(_ run: CleanupRun, count: Int, suffix: String, publish: Publish) async throws {
        for index in 1...max(count, 1) {
            try await publish(CleanupRunJob(runID: run.id, dryRun: run.dryRun), "\(run.id)\(suffix).\(index)")
        }
    }

    /// `cr-20261122T050000Z-1a2b3c4d`: sortable, unique, a valid message id prefix.
    public static func newRunID(now: Date = Date()) -> String {
        let stamp = Date.ISO8601FormatStyle().format(now).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        return "cr-\(stamp)-\(UUID().uuidString.prefix(8).lowercased())"
    }
}
