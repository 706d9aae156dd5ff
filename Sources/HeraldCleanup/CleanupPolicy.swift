import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The cleanup policy (the one row of `herald.cleanup_policy`).
public struct CleanupPolicy: Sendable, Equatable {
    public var enabled: Bool
    /// When cleanup was last switched on; accounts older than this count from it.
    public var enabledAt: Date?
    public var retentionSeconds: Int
    public var updatedAt: Date
    /// While disabled: when it was switched off; accounts created before keep the dates of
    /// the schedule frozen then (nil: none frozen).
    public var keptUntil: Date?

    public var retentionDays: Double { Double(retentionSeconds) / 86_400 }
}

/// Reads and changes ``CleanupPolicy``.
public struct CleanupPolicyStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func load() async throws -> CleanupPolicy {
        guard let row = try await CleanupPolicyRead().first(on: client, logger: logger) else { throw CleanupError.missingPolicy }
        return CleanupPolicy(enabled: row.enabled, enabledAt: row.enabledAt, retentionSeconds: row.retentionSeconds,
                             updatedAt: row.updatedAt, keptUntil: row.keptUntil)
    }

    /// Switches cleanup on. `enabled_at` is set when it was off and kept when it was already on,
    /// so re-running `enable` (or changing only the retention) never restarts the grace period.
    /// Accounts without a kept date are due `retention` after `greatest(created_at, enabled_at)`.
    /// Kept dates do not move: first the schedule the last `disable` froze is written into
    /// `delete_after`, in batches of `batchSize` (short transactions: a sign-in waits at most
    /// for one), then the policy is switched on with the rest written in the same transaction.
    @discardableResult
    public func enable(retentionDays: Int?, batchSize: Int = CleanupConfiguration().batchSize) async throws -> CleanupPolicy {
        var cursor = Date.distantPast
        while true {
            let written = try await FrozenDatesWrite(from: cursor, limit: batchSize).rows(on: client, logger: logger)
            guard !written.isEmpty else { break }
            cursor = max(cursor, written.map(\.createdAt).max() ?? cursor)
        }
        let seconds = retentionDays.map { $0 * 86_400 }
        try await client.withTransaction(logger: logger) { connection in
            // One policy change at a time; what was created before the disable and committed
            // since the last batch is written here, with the switch.
            try await CleanupPolicyLock().rows(on: connection, logger: logger)
            try await FrozenDatesWrite(from: cursor, limit: Int(Int32.max)).rows(on: connection, logger: logger)
            try await CleanupPolicyEnable(retentionSeconds: seconds).rows(on: connection, logger: logger)
        }
        return try await load()
    }

    /// Switches cleanup off: no account gets a date from then on, but every date given so far
    /// is kept. One row is written: the policy freezes its schedule (`kept_enabled_at`,
    /// `kept_retention`, `kept_until` = now), which keeps dating the accounts created before
    /// now (the rule's (2)); runs go on deleting them when due. An active run goes on
    /// too (`heraldctl cleanup cancel` stops it). No-op when already off.
    @discardableResult
    public func disable() async throws -> CleanupPolicy {
        try await CleanupPolicyDisable().rows(on: client, logger: logger)
        return try await load()
    }

    /// How many accounts hold a kept date (given before cleanup was switched off).
    public func keptDates() async throws -> Int {
        try await KeptDatesCount().first(on: client, logger: logger)?.count ?? 0
    }

    /// Changes only the retention (cleanup stays on or off).
    @discardableResult
    public func setRetention(days: Int) async throws -> CleanupPolicy {
        try await CleanupPolicyRetention(retentionSeconds: days * 86_400).rows(on: client, logger: logger)
        return try await load()
    }
}

/// Why a cleanup operation could not be done. The description names no account.
public enum CleanupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The schema has no policy row: run `heraldctl migrate`.
    case missingPolicy
    case unknownRun(String)
    /// No active run to cancel.
    case noActiveRun

    public var description: String {
        switch self {
        case .missingPolicy: "the cleanup policy row is missing (run heraldctl migrate)"
        case .unknownRun(let id): "no cleanup run '\(id)'"
        case .noActiveRun: "no cleanup run is active"
        }
    }
}
