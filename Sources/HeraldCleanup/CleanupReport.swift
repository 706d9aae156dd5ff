import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// What a run would do now: the dry run's answer. Built from ``CleanupEligibility`` (its
/// statements) and ``PurgeTarget/condition``, the same SQL the runs delete with.
public struct CleanupReport: Sendable, Equatable {
    public var policy: CleanupPolicy
    /// Accounts a run would delete now (before the per-run cap).
    public var eligible: Int
    /// Of those, what the cap lets one run delete.
    public var perRunCap: Int
    public var oldestEligibleCreatedAt: Date?
    /// A few eligible ids, oldest first (for an operator's spot check).
    public var sample: [String]
    /// Rows per enabled purge target.
    public var purgeable: [String: Int]

    public static func make(client: PostgresClient, configuration: CleanupConfiguration, sampleSize: Int = 5, logger: Logger) async throws -> CleanupReport {
        let policy = try await CleanupPolicyStore(client: client, logger: logger).load()
        let (eligible, oldest) = try await CleanupEligibility.count(client: client, logger: logger)
        let sample = try await EligibleSample(limit: sampleSize).rows(on: client, logger: logger).map(\.id)
        var purgeable: [String: Int] = [:]
        for target in PurgeTarget.registry(configuration) where target.retentionDays > 0 {
            for try await count in try await client.query("""
                SELECT count(*)::bigint FROM \(unescaped: target.table) WHERE \(unescaped: target.condition)
                """, logger: logger).decode(Int.self) {
                purgeable[target.name] = count
            }
        }
        return CleanupReport(policy: policy, eligible: eligible, perRunCap: configuration.maxAccountsPerRun,
                             oldestEligibleCreatedAt: oldest, sample: sample, purgeable: purgeable)
    }

    public var json: [String: Any] {
        let iso = ISO8601DateFormatter()
        var out: [String: Any] = [
            "enabled": policy.enabled, "retention_days": policy.retentionDays, "eligible_accounts": eligible,
            "per_run_cap": perRunCap, "would_delete_next_run": min(eligible, perRunCap), "sample_ids": sample, "purgeable": purgeable,
        ]
        if let at = policy.enabledAt { out["enabled_at"] = iso.string(from: at) }
        if let oldestEligibleCreatedAt { out["oldest_eligible_created_at"] = iso.string(from: oldestEligibleCreatedAt) }
        return out
    }
}
