import HeraldRuntime
/// The one statement of which accounts cleanup may delete, as SQL. Runs, dry runs, progress
/// and tests all build their queries from here, so they cannot disagree.
///
/// An account is eligible iff it is anonymous (no provider was ever linked: linking clears
/// `is_anonymous` and `delete_after`, and no `account_providers` row exists) and its deletion
/// date (``AccountDeletion``) has passed. That is two arms, each served by its own index:
/// - **kept dates** (`delete_after`, written when cleanup was switched off): due when
///   `delete_after < now()`, whether cleanup is on or off (`accounts_delete_after_idx`);
/// - **computed dates** (no `delete_after`, cleanup on): `greatest(created_at, enabled_at) +
///   retention < now()`, split into `enabled_at + retention < now()` (the policy's, one row)
///   and `created_at < now() - retention` (the account's), so the partial index
///   `accounts_anonymous_created_idx` gives them oldest first.
/// The policy is read as it is when the statement runs, so a changed retention applies from
/// then on to every account without a kept date, and an account that existed before
/// enabling waits `retention` from the enabling time. Disabled accounts are judged like the
/// others: cleanup is about anonymous accounts nobody came back to, which a disabled one is too.
public enum CleanupEligibility {
    /// `now() - retention` while cleanup is enabled and has been for longer than the
    /// retention; NULL otherwise (then no computed date compares as due).
    public static let cutoff = """
        (SELECT now() - p.retention FROM herald.cleanup_policy p
          WHERE p.enabled AND p.enabled_at + p.retention < now())
        """

    /// Anonymous and unlinked, under the alias `account`.
    static func anonymous(_ account: String) -> String {
        """
        \(account).is_anonymous
           AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = \(account).id)
        """
    }

    /// The kept-date arm.
    public static func keptDue(_ account: String = "a") -> String {
        "\(account).delete_after < now() AND \(anonymous(account))"
    }

    /// The computed-date arm.
    public static func computedDue(_ account: String = "a") -> String {
        "\(account).delete_after IS NULL AND \(account).created_at < \(cutoff) AND \(anonymous(account))"
    }

    /// The predicate on `herald.accounts` under the alias `account`.
    public static func predicate(_ account: String = "a") -> String {
        "((\(keptDue(account))) OR (\(computedDue(account))))"
    }

    /// Ids of eligible accounts, kept dates (oldest first) then computed ones (oldest first);
    /// callers add `LIMIT`.
    public static func selectIDs(_ account: String = "a", limit: Int) -> String {
        select("\(account).id", account, limit: limit, locking: "")
    }

    /// `columns` of at most `limit` eligible accounts: the kept-date arm by its index, then the
    /// computed-date arm by its own, each with `locking` (e.g. `FOR UPDATE OF a SKIP LOCKED`),
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
