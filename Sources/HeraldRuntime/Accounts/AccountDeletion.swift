/// An anonymous account's deletion date, as SQL: the one statement of it that cleanup's
/// eligibility, `heraldctl cleanup preview`, switching cleanup off and ``AccountStore``
/// build on (docs/architecture.md, "The rule, in one place").
///
/// While cleanup is enabled, an anonymous account that no provider was linked to is due at
/// `greatest(created_at, enabled_at) + retention`: created while enabled, a retention after
/// creation; existing before enabling, a retention after enabling. Switching cleanup off
/// writes that date into `delete_after`, where it is kept (enabling again or changing the
/// retention does not move it) until the account is deleted or linked (the link trigger
/// clears it). A kept date wins over the computed one.
public enum AccountDeletion {
    /// The date under a policy enabled at `enabledAt` with `retention` (SQL expressions), for
    /// an anonymous, unlinked account under the alias `account`: its kept date if it has one.
    public static func date(_ account: String = "a", enabledAt: String, retention: String) -> String {
        "coalesce(\(account).delete_after, greatest(\(account).created_at, \(enabledAt)) + \(retention))"
    }

    /// Whether the account under `account` is anonymous and unlinked (only those have a date).
    public static func isAnonymous(_ account: String = "a") -> String {
        "\(account).is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = \(account).id)"
    }

    /// The account's date under the policy as it is (NULL: none, i.e. linked, or cleanup off
    /// and no kept date).
    public static func current(_ account: String = "a") -> String {
        """
        CASE WHEN \(isAnonymous(account)) THEN coalesce(\(account).delete_after,
            (SELECT greatest(\(account).created_at, p.enabled_at) + p.retention FROM herald.cleanup_policy p WHERE p.enabled)) END
        """
    }

    /// The `UPDATE` that keeps every computed date (run when cleanup is switched off, in the
    /// transaction that switches it off, with writes to `herald.accounts` held off).
    public static let keepComputedDates = """
        UPDATE herald.accounts a SET delete_after = greatest(a.created_at, p.enabled_at) + p.retention
          FROM herald.cleanup_policy p
         WHERE p.enabled AND a.delete_after IS NULL AND \(isAnonymous("a"))
        """
}
