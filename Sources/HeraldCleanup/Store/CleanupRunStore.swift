import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// `herald.cleanup_runs`: creating, joining, finishing and listing runs.
public struct CleanupRunStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The columns ``decode(_:)`` reads, in its order, qualified by `alias` if given.
    static func columns(_ alias: String? = nil) -> String {
        let prefix = alias.map { "\($0)." } ?? ""
        return ["id", "status", "dry_run", "max_accounts", "fan_out", "requested_at", "started_at", "ended_at", "heartbeat_at",
                "eligible_at_start", "accounts_deleted", "purged::text", "batches", "joins", "reason", "paused_ms"]
            .map { prefix + $0 }.joined(separator: ", ")
    }

    /// What ``create(id:dryRun:maxAccounts:fanOut:)`` found.
    public enum Creation: Sendable, Equatable {
        case created(CleanupRun)
        /// A run with this id exists already (any status).
        case exists(CleanupRun)
        /// Another (non-dry) run is active; no duplicate was started.
        case anotherActive(CleanupRun)
    }

    /// Inserts a `scheduled` run unless one with the id exists or another run is active
    /// (the unique partial index `cleanup_runs_one_active_idx` decides, race-free).
    public func create(id: String, dryRun: Bool, maxAccounts: Int, fanOut: Int) async throws -> Creation {
        let rows = try await client.query("""
            INSERT INTO herald.cleanup_runs (id, status, dry_run, max_accounts, fan_out)
            VALUES (\(id), \(CleanupRun.Status.scheduled), \(dryRun), \(maxAccounts), \(fanOut))
            ON CONFLICT DO NOTHING
            RETURNING \(unescaped: Self.columns())
            """, logger: logger)
        if let run = try await Self.decode(rows).first { return .created(run) }
        if let run = try await get(id) { return .exists(run) }
        if let run = try await active() { return .anotherActive(run) }
        // The conflicting run ended between the insert and the look: try once more.
        return try await create(id: id, dryRun: dryRun, maxAccounts: maxAccounts, fanOut: fanOut)
    }

    public func get(_ id: String) async throws -> CleanupRun? {
        try await Self.decode(client.query("SELECT \(unescaped: Self.columns()) FROM herald.cleanup_runs WHERE id = \(id)", logger: logger)).first
    }

    /// The active (non-dry) run, if any.
    public func active() async throws -> CleanupRun? {
        try await Self.decode(client.query("""
            SELECT \(unescaped: Self.columns()) FROM herald.cleanup_runs
             WHERE status IN ('scheduled', 'running') AND NOT dry_run
            """, logger: logger)).first
    }

    /// The latest runs, newest first.
    public func recent(limit: Int) async throws -> [CleanupRun] {
        try await Self.decode(client.query("""
            SELECT \(unescaped: Self.columns()) FROM herald.cleanup_runs ORDER BY requested_at DESC, id LIMIT \(limit)
            """, logger: logger))
    }

    /// A worker joins: `scheduled` becomes `running`; the first to join records the policy and
    /// the eligible count (for progress). Returns the run as it is now.
    public func join(_ id: String) async throws -> CleanupRun? {
        try await Self.decode(client.query("""
            UPDATE herald.cleanup_runs r
               SET status = CASE WHEN r.status = 'scheduled' THEN 'running' ELSE r.status END,
                   started_at = coalesce(r.started_at, now()),
                   heartbeat_at = CASE WHEN r.status IN ('scheduled', 'running') THEN now() ELSE r.heartbeat_at END,
                   joins = r.joins + 1,
                   retention = coalesce(r.retention, p.retention),
                   enabled_at = coalesce(r.enabled_at, p.enabled_at),
                   eligible_at_start = CASE WHEN r.started_at IS NULL AND NOT r.dry_run
                       THEN (SELECT count(*) FROM herald.accounts a WHERE \(unescaped: CleanupEligibility.predicate("a")))
                       ELSE r.eligible_at_start END
              FROM herald.cleanup_policy p
             WHERE r.id = \(id)
            RETURNING \(unescaped: Self.columns("r"))
            """, logger: logger)).first
    }

    /// Ends an active run (no-op for one that has ended).
    public func finish(_ id: String, status: CleanupRun.Status, reason: String?) async throws {
        try await client.query("""
            UPDATE herald.cleanup_runs SET status = \(status), ended_at = now(), heartbeat_at = now(),
                   reason = coalesce(\(reason), reason)
             WHERE id = \(id) AND status IN ('scheduled', 'running')
            """, logger: logger)
    }

    /// Cancels the active (non-dry) run, if any: its workers stop after their batch (the
    /// batch's count is refused and it rolls back). Returns the cancelled run.
    public func cancelActive(reason: String) async throws -> CleanupRun? {
        try await Self.decode(client.query("""
            UPDATE herald.cleanup_runs SET status = \(CleanupRun.Status.cancelled), ended_at = now(), heartbeat_at = now(), reason = \(reason)
             WHERE status IN ('scheduled', 'running') AND NOT dry_run
            RETURNING \(unescaped: Self.columns())
            """, logger: logger)).first
    }

    /// Records a finished dry run's report.
    public func recordDryRun(_ id: String, report: CleanupReport) async throws {
        let purged = String(decoding: try JSONSerialization.data(withJSONObject: report.purgeable, options: [.sortedKeys]), as: UTF8.self)
        try await client.query("""
            UPDATE herald.cleanup_runs SET status = \(CleanupRun.Status.completed), started_at = coalesce(started_at, now()),
                   ended_at = now(), heartbeat_at = now(), eligible_at_start = \(report.eligible),
                   purged = \(purged)::jsonb, reason = 'dry run: nothing deleted'
             WHERE id = \(id)
            """, logger: logger)
    }

    static func decode(_ rows: PostgresRowSequence) async throws -> [CleanupRun] {
        var out: [CleanupRun] = []
        typealias Row = (String, CleanupRun.Status, Bool, Int, Int, Date, Date?, Date?, Date, Int?, Int, String, Int, Int, String?, Int)
        for try await row in rows.decode(Row.self) {
            let purged = (try? JSONSerialization.jsonObject(with: Data(row.11.utf8))) as? [String: Int] ?? [:]
            out.append(CleanupRun(
                id: row.0, status: row.1, dryRun: row.2, maxAccounts: row.3,
                fanOut: row.4, requestedAt: row.5, startedAt: row.6, endedAt: row.7, heartbeatAt: row.8,
                eligibleAtStart: row.9, accountsDeleted: row.10, purged: purged, batches: row.12, joins: row.13, reason: row.14,
                pausedMilliseconds: row.15))
        }
        return out
    }
}
