-- name: AccountRead
-- One account with its providers, and its deletion date under the cleanup policy as it is
-- (docs/architecture.md, "The rule, in one place"): none for a linked account, nor while
-- cleanup is off for one given none. `deletionDateKept`: the date was kept from before cleanup
-- was switched off (written, or the frozen schedule's) rather than computed from the policy.
-- param id: text
-- column id: text
-- column createdAt: timestamp with time zone
-- column isAnonymous: boolean
-- column lastSignInAt: timestamp with time zone?
-- column disabled: boolean
-- column providers: text[]
-- column deletionDate: timestamp with time zone?
-- column deletionDateKept: boolean
SELECT a.id, a.created_at, a.is_anonymous, a.last_sign_in_at, a.disabled,
       coalesce((SELECT array_agg(ap.provider ORDER BY ap.provider) FROM herald.account_providers ap WHERE ap.account_id = a.id), '{}'),
       CASE WHEN a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id)
            THEN coalesce(a.delete_after,
                          CASE WHEN a.created_at < p.kept_until THEN greatest(a.created_at, p.kept_enabled_at) + p.kept_retention END,
                          CASE WHEN p.enabled THEN greatest(a.created_at, p.enabled_at) + p.retention END) END,
       (a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id)
        AND (a.delete_after IS NOT NULL OR coalesce(a.created_at < p.kept_until, false)))
  FROM herald.accounts a, herald.cleanup_policy p WHERE a.id = $1::text;
