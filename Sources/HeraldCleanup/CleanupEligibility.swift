import HeraldRuntime
/// The one statement of which accounts cleanup may delete, as SQL. Runs, dry runs, progress
/// and tests all build their queries from here, so they cannot disagree.
///
/// An account is eligible iff the policy is enabled, the account is anonymous (no provider
/// was ever linked: linking clears `is_anonymous`, and no `account_providers` row exists),
/// and `greatest(created_at, enabled_at) + retention < now()`. That is split into two
/// conditions so the partial index `accounts_anonymous_created_idx` serves the scan:
/// `enabled_at + retention < now()` (the policy's, one row) and
/// `created_at < now() - retention` (the account's). Both use the policy as it is when the
/// statement runs, so a changed retention applies to every account from then on, and an
/// account that existed before enabling waits `retention` from the enabling time.
/// Disabled accounts are judged like the others: cleanup is about anonymous accounts nobody
/// came back to, which a disabled one is too.
public enum CleanupEligibility {
    /// `now() - retention` while cleanup is enabled and has been for longer than the
    /// retention; NULL otherwise (then nothing compares as eligible).
    public static let cutoff = """
        (SELECT now() - p.retention FROM herald.cleanup_policy p
          WHERE p.enabled AND p.enabled_at + p.retention < now())
        """

    /// The predicate on `herald.accounts` under the alias `account`.
    public static func predicate(_ account: String = "a") -> String {
        """
        \(account).is_anonymous
           AND \(account).created_at < \(cutoff)
           AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = \(account).id)
        """
    }

    /// Ids of eligible accounts, oldest first; callers add `LIMIT` and locking.
    public static func selectIDs(_ account: String = "a") -> String {
        select("\(account).id", account)
    }

    /// `columns` of eligible accounts, oldest first; callers add `LIMIT` and locking.
    public static func select(_ columns: String, _ account: String = "a") -> String {
        "SELECT \(columns) FROM herald.accounts \(account) WHERE \(predicate(account)) ORDER BY \(account).created_at"
    }
}
