/// An anonymous account's deletion date, as SQL: the statement of it that ``AccountStore``
/// builds on, and that cleanup's statements (eligibility, `heraldctl cleanup preview`, switching
/// cleanup on) write out in `HeraldCleanup/SQL/queries/` (docs/architecture.md, "The rule, in one place").
///
/// For an anonymous account no provider was linked to, the first that applies:
/// 1. `delete_after`: a date written for good (by `enable`, from a frozen schedule);
/// 2. while disabled, for an account created before the policy's `kept_until` (when cleanup
///    was switched off): `greatest(created_at, kept_enabled_at) + kept_retention`, the
///    schedule `disable` froze (Firebase: "any anonymous account scheduled for deletion
///    remains scheduled for deletion");
/// 3. while enabled: `greatest(created_at, enabled_at) + retention`: created while enabled, a
///    retention after creation; existing before enabling, a retention after enabling.
/// Otherwise (linked, or created while disabled) none. `enable` writes (2) into `delete_after`
/// before switching on, so a later enabling time or retention never moves those dates.
/// `policy` is the alias of a `herald.cleanup_policy` row (or of a row with its `kept_*` columns).
public enum AccountDeletion {
    /// (2), or NULL.
    public static func frozen(_ account: String = "a", policy p: String = "p") -> String {
        "CASE WHEN \(account).created_at < \(p).kept_until THEN greatest(\(account).created_at, \(p).kept_enabled_at) + \(p).kept_retention END"
    }

    /// The account's date under the policy row `p` as it is; NULL when it has none.
    public static func current(_ account: String = "a", policy p: String = "p") -> String {
        """
        CASE WHEN \(isAnonymous(account)) THEN coalesce(\(account).delete_after, \(frozen(account, policy: p)),
            CASE WHEN \(p).enabled THEN greatest(\(account).created_at, \(p).enabled_at) + \(p).retention END) END
        """
    }

    /// Whether the account has a date kept from before cleanup was switched off ((1) or (2)),
    /// rather than one computed from the enabled policy, or none.
    public static func isKept(_ account: String = "a", policy p: String = "p") -> String {
        "(\(isAnonymous(account)) AND (\(account).delete_after IS NOT NULL OR coalesce(\(account).created_at < \(p).kept_until, false)))"
    }

    /// Whether the account under `account` is anonymous and unlinked (only those have a date).
    public static func isAnonymous(_ account: String = "a") -> String {
        "\(account).is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = \(account).id)"
    }
}
