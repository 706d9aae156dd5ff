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

    /// Switches cleanup off and cancels the active run: its workers stop after their batch.
    @discardableResult
    public func disable() async throws -> CleanupPolicy {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("UPDATE herald.cleanup_policy SET enabled = false, updated_at = now()", logger: logger)
            try await connection.query("""
                UPDATE herald.cleanup_runs SET status = \(CleanupRun.Status.cancelled), ended_at = now(), reason = 'cleanup disabled'
                 WHERE status IN ('scheduled', 'running')
                """, logger: logger)
        }
        return try await load()
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

    public var description: String {
        switch self {
        case .missingPolicy: "the cleanup policy row is missing (run heraldctl migrate)"
        case .unknownRun(let id): "no cleanup run '\(id)'"
        }
    }
}
