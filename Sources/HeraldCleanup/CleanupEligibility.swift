import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// Which accounts cleanup may delete. The rule is SQL, written out in each statement that
/// applies it (`SQL/queries/`: `eligible_count.sql`, `eligible_sample.sql`, `any_eligible.sql`,
/// `accounts_delete_batch.sql`, `cleanup_run_join.sql`), so runs, dry runs, progress and tests
/// read the same text; `CleanupUnitTests` fails when one of them departs from the others.
///
/// An account is eligible iff it is anonymous (no provider was ever linked: linking clears
/// `is_anonymous` and `delete_after`, and no `account_providers` row exists) and its deletion
/// date (docs/architecture.md, "The rule, in one place") has passed. That is two arms, each served by its own index:
/// - **written dates** (`delete_after`): due when `delete_after < now()`, whether cleanup is
///   on or off (`accounts_delete_after_idx`);
/// - **dates from the policy** (no `delete_after`): while enabled `greatest(created_at,
///   enabled_at) + retention < now()`, while disabled the frozen schedule's
///   `created_at < kept_until AND greatest(created_at, kept_enabled_at) + kept_retention < now()`;
///   either is split into a condition on the policy (one row) and `created_at < cutoff`, so
///   the partial index `accounts_anonymous_created_idx` gives them oldest first. The cutoff:
///   enabled, `now() - retention` once enabled for longer than the retention; disabled with a
///   frozen schedule, `least(kept_until, now() - kept_retention)` once `kept_enabled_at` is
///   more than `kept_retention` ago; NULL otherwise (then no date from the policy is due).
/// A batch reads the written-date arm by its index, then the policy's arm by its own, each
/// limited (and locked), so it reads at most a batch of rows of each index instead of sorting
/// every eligible row (subqueries in FROM: a locking clause may not sit in an arm of a UNION).
/// The policy is read as it is when the statement runs, so a changed retention applies from
/// then on to every account whose date is not kept, and an account that existed before
/// enabling waits `retention` from the enabling time. Disabled accounts are judged like the
/// others: cleanup is about anonymous accounts nobody came back to, which a disabled one is too.
public enum CleanupEligibility {
    /// How many accounts are eligible now, and when the oldest of them was created.
    public static func count(client: PostgresClient, logger: Logger) async throws -> (count: Int, oldestCreatedAt: Date?) {
        let row = try await EligibleCount().first(on: client, logger: logger)
        return (row?.count ?? 0, row?.oldestCreatedAt)
    }
}
