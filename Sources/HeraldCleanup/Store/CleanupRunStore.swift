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
        let inserted = try await CleanupRunInsert(id: id, dryRun: dryRun, maxAccounts: maxAccounts, fanOut: fanOut)
            .first(on: client, logger: logger)
        if let row = inserted { return .created(CleanupRun(row)) }
        if let run = try await get(id) { return .exists(run) }
        if let run = try await active() { return .anotherActive(run) }
        // The conflicting run ended between the insert and the look: try once more.
        return try await create(id: id, dryRun: dryRun, maxAccounts: maxAccounts, fanOut: fanOut)
    }

    public func get(_ id: String) async throws -> CleanupRun? {
        try await CleanupRunGet(id: id).first(on: client, logger: logger).map(CleanupRun.init)
    }

    /// The active (non-dry) run, if any.
    public func active() async throws -> CleanupRun? {
        try await CleanupRunActive().first(on: client, logger: logger).map(CleanupRun.init)
    }

    /// The latest runs, newest first.
    public func recent(limit: Int) async throws -> [CleanupRun] {
        try await CleanupRunsRecent(limit: limit).rows(on: client, logger: logger).map(CleanupRun.init)
    }

    /// A worker joins: `scheduled` becomes `running`; the first to join records the policy and
    /// the eligible count (for progress). Returns the run as it is now.
    public func join(_ id: String) async throws -> CleanupRun? {
        try await CleanupRunJoin(id: id).first(on: client, logger: logger).map(CleanupRun.init)
    }

    /// Ends an active run (no-op for one that has ended).
    public func finish(_ id: String, status: CleanupRun.Status, reason: String?) async throws {
        try await CleanupRunFinish(status: status, reason: reason, id: id).rows(on: client, logger: logger)
    }

    /// Cancels the active (non-dry) run, if any: its workers stop after their batch (the
    /// batch's count is refused and it rolls back). Returns the cancelled run.
    public func cancelActive(reason: String) async throws -> CleanupRun? {
        try await CleanupRunCancelActive(reason: reason).first(on: client, logger: logger).map(CleanupRun.init)
    }

    /// Records a finished dry run's report.
    public func recordDryRun(_ id: String, report: CleanupReport) async throws {
        let purged = String(decoding: try JSONSerialization.data(withJSONObject: report.purgeable, options: [.sortedKeys]), as: UTF8.self)
        try await CleanupRunDryRunRecord(eligible: report.eligible, purged: purged, id: id).rows(on: client, logger: logger)
    }
}

/// The columns every statement of a run gives (`SQL/queries/cleanup_run*.sql`), one `Row` type each.
protocol CleanupRunColumns {
    var id: String { get }
    var status: CleanupRun.Status { get }
    var dryRun: Bool { get }
    var maxAccounts: Int { get }
    var fanOut: Int { get }
    var requestedAt: Date { get }
    var startedAt: Date? { get }
    var endedAt: Date? { get }
    var heartbeatAt: Date { get }
    var eligibleAtStart: Int? { get }
    var accountsDeleted: Int { get }
    /// The `purged` object as JSON text.
    var purged: String { get }
    var batches: Int { get }
    var joins: Int { get }
    var reason: String? { get }
    var pausedMilliseconds: Int { get }
}

extension CleanupRunInsert.Row: CleanupRunColumns {}
extension CleanupRunGet.Row: CleanupRunColumns {}
extension CleanupRunActive.Row: CleanupRunColumns {}
extension CleanupRunsRecent.Row: CleanupRunColumns {}
extension CleanupRunJoin.Row: CleanupRunColumns {}
extension CleanupRunCancelActive.Row: CleanupRunColumns {}

extension CleanupRun {
    /// The run a statement's row gives; `purged` that is not an object of counts reads as none.
    init(_ row: some CleanupRunColumns) {
        let purged = (try? JSONSerialization.jsonObject(with: Data(row.purged.utf8))) as? [String: Int] ?? [:]
        self.init(id: row.id, status: row.status, dryRun: row.dryRun, maxAccounts: row.maxAccounts,
                  fanOut: row.fanOut, requestedAt: row.requestedAt, startedAt: row.startedAt, endedAt: row.endedAt, heartbeatAt: row.heartbeatAt,
                  eligibleAtStart: row.eligibleAtStart, accountsDeleted: row.accountsDeleted, purged: purged, batches: row.batches,
                  joins: row.joins, reason: row.reason, pausedMilliseconds: row.pausedMilliseconds)
    }
}
