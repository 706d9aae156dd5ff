import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// `heraldctl cleanup preview`: when the anonymous accounts that exist now would be due if
/// cleanup were enabled now with `retention` (the deletion date, `SQL/queries/preview_days.sql`:
/// the dates a run deletes by). Enabled, the dates count from the policy's `enabled_at` (as
/// `heraldctl cleanup enable --retention-days` would leave it); disabled, from now (as
/// `enable` would set it). Kept dates (given before cleanup was switched off) do not depend
/// on the retention. Accounts created from now on are not counted: each will be due a
/// retention after its creation. Reads only; works whether cleanup is on or off.
public struct CleanupPreview: Sendable, Equatable {
    /// One UTC day and the accounts that become due on it.
    public struct Day: Sendable, Equatable {
        /// `YYYY-MM-DD` (UTC).
        public var day: String
        public var accounts: Int
        /// Of those, accounts whose date is kept.
        public var kept: Int
    }

    public var policy: CleanupPolicy
    public var retentionSeconds: Int
    /// What the computed dates count from for accounts created before it.
    public var countsFrom: Date
    /// Dates already passed: a run would delete these at once.
    public var dueNow: Int
    /// Later dates per UTC day, in order.
    public var days: [Day]
    /// Anonymous accounts holding a kept date (included in `dueNow` and `days`).
    public var kept: Int

    /// Every anonymous account counted: `dueNow` plus the days.
    public var total: Int { dueNow + days.map(\.accounts).reduce(0, +) }

    /// At most ten years, at least a second (the policy's own bounds are whole days).
    public static let retentionRange = 1...(3_650 * 86_400)

    public static func make(client: PostgresClient, retentionSeconds: Int?, logger: Logger) async throws -> CleanupPreview {
        let policy = try await CleanupPolicyStore(client: client, logger: logger).load()
        let retention = retentionSeconds ?? policy.retentionSeconds
        // One statement, one snapshot: "now", the policy and the accounts agree.
        let rows = try await PreviewDays(retentionSeconds: retention).rows(on: client, logger: logger)
        var countsFrom = policy.enabled ? (policy.enabledAt ?? Date()) : Date()
        var (dueNow, kept, days) = (0, 0, [Day]())
        for row in rows {
            countsFrom = row.countsFrom
            kept += row.kept
            if let day = row.day { days.append(Day(day: day, accounts: row.accounts, kept: row.kept)) } else { dueNow = row.accounts }
        }
        return CleanupPreview(policy: policy, retentionSeconds: retention, countsFrom: countsFrom, dueNow: dueNow, days: days, kept: kept)
    }

    public var json: [String: Any] {
        [
            "enabled": policy.enabled, "retention_days": Double(retentionSeconds) / 86_400,
            "counts_from": ISO8601DateFormatter().string(from: countsFrom), "due_now": dueNow,
            "days": days.map { ["day": $0.day, "accounts": $0.accounts, "kept": $0.kept] as [String: Any] },
            "kept": kept, "total": total,
        ]
    }
}
