import HeraldRuntime
/// The one statement of which accounts cleanup may delete, as SQL. Runs, dry runs, progress
/// and tests all build their queries from here, so they cannot disagree.
///
/// An account is eligible iff it is anonymous (no provider was ever linked: linking clears
/// `is_anonymous` and `delete_after`, and no `account_providers` row exists) and its deletion
/// date (``AccountDeletion``) has passed. That is two arms, each served by its own index:
/// - **written dates** (`delete_after`): due when `delete_after < now()`, whether cleanup is
///   on or off (`accounts_delete_after_idx`);
/// - **dates from the policy** (no `delete_after`): while enabled `greatest(created_at,
///   enabled_at) + retention < now()`, while disabled the frozen schedule's
///   `created_at < kept_until AND greatest(created_at, kept_enabled_at) + kept_retention < now()`;
///   either is split into a condition on the policy (one row) and `created_at < cutoff`, so
///   the partial index `accounts_anonymous_created_idx` gives them oldest first.
/// The policy is read as it is when the statement runs, so a changed retention applies from
/// then on to every account whose date is not kept, and an account that existed before
/// enabling waits `retention` from the enabling time. Disabled accounts are judged like the
/// others: cleanup is about anonymous accounts nobody came back to, which a disabled one is too.
public enum CleanupEligibility {
    /// Enabled: `now() - retention` once enabled for longer than the retention. Disabled with
    /// a frozen schedule: `least(kept_until, now() - kept_retention)` once `kept_enabled_at`
    /// is more than `kept_retention` ago. NULL otherwise (then no date from the policy is due).
    public static let cutoff = """
        (SELECT CASE WHEN p.enabled THEN CASE WHEN p.enabled_at + p.retention < now() THEN now() - p.retention END
                     WHEN p.kept_enabled_at + p.kept_retention < now() THEN least(p.kept_until, now() - p.kept_retention) END
           FROM herald.cleanup_policy p)
        """

    /// Anonymous and unlinked, under the alias `account`.
    static func anonymous(_ account: String) -> String {
        """
        \(account).is_anonymous
           AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = \(account).id)
        """
    }

    /// The written-date arm.
    public static func keptDue(_ account: String = "a") -> String {
        "\(account).delete_after < now() AND \(anonymous(account))"
    }

    /// The arm of dates from the policy.
    public static func computedDue(_ account: String = "a") -> String {
        "\(account).delete_after IS NULL AND \(account).created_at < \(cutoff) AND \(anonymous(account))"
    }

    /// The predicate on `herald.accounts` under the alias `account`.
    public static func predicate(_ account: String = "a") -> String {
        "((\(keptDue(account))) OR (\(computedDue(account))))"
    }

    /// Ids of eligible accounts, written dates (oldest first) then the policy's (oldest first);
    /// callers add `LIMIT`.
    public static func selectIDs(_ account: String = "a", limit: Int) -> String {
        select("\(account).id", account, limit: limit, locking: "")
    }

    /// `columns` of at most `limit` eligible accounts: the written-date arm by its index, then
    /// the policy's arm by its own, each with `locking` (e.g. `FOR UPDATE OF a SKIP LOCKED`),
    /// so a batch reads at most `limit` rows of each index instead of sorting every eligible row.
    public static func select(_ columns: String, _ account: String = "a", limit: Int, locking: String) -> String {
        // Subqueries in FROM: a locking clause may not sit in an arm of a UNION itself. The
        // Append under the LIMIT reads the second arm only when the first gave too few rows.
        """
        SELECT * FROM (SELECT \(columns) FROM herald.accounts \(account) WHERE \(keptDue(account))
          ORDER BY \(account).delete_after LIMIT \(limit) \(locking)) kept
        UNION ALL
        SELECT * FROM (SELECT \(columns) FROM herald.accounts \(account) WHERE \(computedDue(account))
          ORDER BY \(account).created_at LIMIT \(limit) \(locking)) computed
        LIMIT \(limit)
        """
    }
}
