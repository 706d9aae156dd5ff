import Foundation
import HeraldRuntime

/// One row of `herald.cleanup_runs`: a run's state and its counts.
public struct CleanupRun: Sendable, Equatable {
    public enum Status: String, StoredState {
        /// Inserted by `heraldctl cleanup schedule`; no worker has joined yet.
        case scheduled
        case running
        /// Nothing eligible was left, or the cap was reached.
        case completed
        /// An operator cancelled it (`heraldctl cleanup cancel`); runs before migration 11 were
        /// also cancelled by `disable`.
        case cancelled
        case failed

        public var isActive: Bool { self == .scheduled || self == .running }
    }

    public var id: String
    public var status: Status
    public var dryRun: Bool
    public var maxAccounts: Int
    public var fanOut: Int
    public var requestedAt: Date
    public var startedAt: Date?
    public var endedAt: Date?
    public var heartbeatAt: Date
    /// Eligible accounts when the first worker joined (a dry run: what it would delete).
    public var eligibleAtStart: Int?
    public var accountsDeleted: Int
    /// Rows purged per target (a dry run: what it would purge).
    public var purged: [String: Int]
    public var batches: Int
    /// How often a worker joined the run (jobs handled, redeliveries included).
    public var joins: Int
    public var reason: String?
    /// Pauses its workers took between batches to leave the database to live traffic
    /// (`cleanup.pace.*`), summed over the workers, in milliseconds.
    public var pausedMilliseconds: Int = 0

    /// Everything as a JSON object (for `--output json`).
    public var json: [String: Any] {
        let iso = ISO8601DateFormatter()
        var out: [String: Any] = [
            "run_id": id, "status": status.rawValue, "dry_run": dryRun, "max_accounts": maxAccounts,
            "fan_out": fanOut, "requested_at": iso.string(from: requestedAt), "heartbeat_at": iso.string(from: heartbeatAt),
            "accounts_deleted": accountsDeleted, "purged": purged, "batches": batches, "joins": joins,
            "paused_ms": pausedMilliseconds,
        ]
        if let startedAt { out["started_at"] = iso.string(from: startedAt) }
        if let endedAt { out["ended_at"] = iso.string(from: endedAt) }
        if let eligibleAtStart { out["eligible_at_start"] = eligibleAtStart }
        if let reason { out["reason"] = reason }
        return out
    }
}
