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
            SELECT enabled, enabled_at, extract(epoch FROM retention)::bigint, updated_at FROM herald.cleanup_policy
            """, logger: logger)
        for try await (enabled, enabledAt, retention, updatedAt) in rows.decode((Bool, Date?, Int, Date).self) {
            return CleanupPolicy(enabled: enabled, enabledAt: enabledAt, retentionSeconds: retention, updatedAt: updatedAt)
        }
        throw CleanupError.missingPolicy
    }

    /// Switches cleanup on. `enabled_at` is set when it was off and kept when it was already on,
    /// so re-running `enable` (or changing only the retention) never restarts the grace period.
    /// Accounts without a kept date are due `retention` after `greatest(created_at, enabled_at)`;
    /// kept dates (given before an earlier `disable`) are not moved.
    @discardableResult
    public func enable(retentionDays: Int?) async throws -> CleanupPolicy {
        let seconds = retentionDays.map { $0 * 86_400 }
        try await client.query("""
            UPDATE herald.cleanup_policy
               SET enabled_at = CASE WHEN enabled THEN enabled_at ELSE now() END,
                   enabled = true,
                   retention = coalesce(make_interval(secs => \(seconds)), retention),
                   updated_at = now()
            """, logger: logger)
        return try await load()
    }

    /// Switches cleanup off. No account gets a date from then on, but every date given so far
    /// is kept: in the same transaction each anonymous account's computed date is written to
    /// `delete_after` (``AccountDeletion/keepComputedDates``), and runs go on deleting those
    /// accounts when due. An active run goes on too (`heraldctl cleanup cancel` stops it).
    ///
    /// Writes to `herald.accounts` (sign-ups, sign-ins, links, batches) wait for that one
    /// statement: the table is locked in SHARE mode so that no account created while cleanup
    /// was on commits unseen by it and so goes without a date. The lock is waited for at most
    /// `lockTimeoutSeconds` (a long transaction on accounts would otherwise queue every sign-in
    /// behind this one): then ``CleanupError/accountsBusy`` and nothing changed.
    @discardableResult
    public func disable(lockTimeoutSeconds: Int = 10) async throws -> CleanupPolicy {
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = '\(max(1, lockTimeoutSeconds))s'"), logger: logger)
                // One policy change at a time: an enable waits for this transaction.
                try await connection.query("SELECT 1 FROM herald.cleanup_policy FOR UPDATE", logger: logger)
                try await connection.query("LOCK TABLE herald.accounts IN SHARE MODE", logger: logger)
                try await connection.query(PostgresQuery(unsafeSQL: AccountDeletion.keepComputedDates), logger: logger)
                try await connection.query("UPDATE herald.cleanup_policy SET enabled = false, updated_at = now()", logger: logger)
            }
        } catch let error as PostgresTransactionError {
            if let psql = error.closureError as? PSQLError, psql.serverInfo?[.sqlState] == "55P03" { throw CleanupError.accountsBusy }
            throw error
        }
        return try await load()
    }

    /// How many accounts hold a kept date (given before cleanup was switched off).
    public func keptDates() async throws -> Int {
        for try await count in try await client.query("""
            SELECT count(*)::bigint FROM herald.accounts a WHERE a.delete_after IS NOT NULL AND \(unescaped: AccountDeletion.isAnonymous("a"))
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
    /// `disable` could not lock `herald.accounts` in time (a long transaction holds it).
    case accountsBusy
    /// No active run to cancel.
    case noActiveRun

    public var description: String {
        switch self {
        case .missingPolicy: "the cleanup policy row is missing (run heraldctl migrate)"
        case .unknownRun(let id): "no cleanup run '\(id)'"
        case .accountsBusy: "herald.accounts stayed locked by another transaction; cleanup is still enabled, try again"
        case .noActiveRun: "no cleanup run is active"
        }
    }
}
