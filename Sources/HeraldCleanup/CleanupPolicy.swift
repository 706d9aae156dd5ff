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
        let rows = try await client.query("""
            SELECT enabled, enabled_at, extract(epoch FROM retention)::bigint, updated_at, kept_until FROM herald.cleanup_policy
            """, logger: logger)
        for try await (enabled, enabledAt, retention, updatedAt, keptUntil) in rows.decode((Bool, Date?, Int, Date, Date?).self) {
            return CleanupPolicy(enabled: enabled, enabledAt: enabledAt, retentionSeconds: retention, updatedAt: updatedAt, keptUntil: keptUntil)
        }
        throw CleanupError.missingPolicy
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
            var binds = PostgresBindings()
            binds.append(cursor)
            var written = 0
            for try await createdAt in try await client.query(
                PostgresQuery(unsafeSQL: AccountDeletion.writeFrozenBatch(limit: batchSize), binds: binds), logger: logger).decode(Date.self) {
                written += 1
                cursor = max(cursor, createdAt)
            }
            if written == 0 { break }
        }
        let seconds = retentionDays.map { $0 * 86_400 }
        try await client.withTransaction(logger: logger) { connection in
            // One policy change at a time; what was created before the disable and committed
            // since the last batch is written here, with the switch.
            try await connection.query("SELECT 1 FROM herald.cleanup_policy FOR UPDATE", logger: logger)
            var binds = PostgresBindings()
            binds.append(cursor)
            try await connection.query(PostgresQuery(unsafeSQL: AccountDeletion.writeFrozenBatch(limit: Int(Int32.max)), binds: binds), logger: logger)
            try await connection.query("""
                UPDATE herald.cleanup_policy
                   SET enabled_at = CASE WHEN enabled THEN enabled_at ELSE now() END,
                       enabled = true,
                       retention = coalesce(make_interval(secs => \(seconds)), retention),
                       kept_enabled_at = NULL, kept_retention = NULL, kept_until = NULL,
                       updated_at = now()
                """, logger: logger)
        }
        return try await load()
    }

    /// Switches cleanup off: no account gets a date from then on, but every date given so far
    /// is kept. One row is written: the policy freezes its schedule (`kept_enabled_at`,
    /// `kept_retention`, `kept_until` = now), which keeps dating the accounts created before
    /// now (``AccountDeletion``); runs go on deleting them when due. An active run goes on
    /// too (`heraldctl cleanup cancel` stops it). No-op when already off.
    @discardableResult
    public func disable() async throws -> CleanupPolicy {
        try await client.query("""
            UPDATE herald.cleanup_policy
               SET enabled = false, kept_enabled_at = enabled_at, kept_retention = retention, kept_until = now(), updated_at = now()
             WHERE enabled
            """, logger: logger)
        return try await load()
    }

    /// How many accounts hold a kept date (given before cleanup was switched off).
    public func keptDates() async throws -> Int {
        for try await count in try await client.query("""
            SELECT count(*)::bigint FROM herald.accounts a, herald.cleanup_policy p
             WHERE \(unescaped: AccountDeletion.isKept("a", policy: "p")) AND \(unescaped: AccountDeletion.isAnonymous("a"))
            """, logger: logger).decode(Int.self) {
            return count
        }
        return 0
    }

    /// Changes only the retention (cleanup stays on or off).
    @discardableResult
    public func setRetention(days: Int) async throws -> CleanupPolicy {
        try await client.query("""
            UPDATE herald.cleanup_policy SET retention = make_interval(secs => \(days * 86_400)), updated_at = now()
            """, logger: logger)
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
