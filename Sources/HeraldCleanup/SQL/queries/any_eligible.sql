-- name: AnyEligible
-- Whether an account a run may delete is left, locked or not (CleanupEligibility).
-- column exists: boolean
SELECT EXISTS (SELECT 1 FROM herald.accounts a
 WHERE ((a.delete_after < now()
         AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id))
     OR (a.delete_after IS NULL
         AND a.created_at < (SELECT CASE WHEN p.enabled THEN CASE WHEN p.enabled_at + p.retention < now() THEN now() - p.retention END
                                         WHEN p.kept_enabled_at + p.kept_retention < now() THEN least(p.kept_until, now() - p.kept_retention) END
                               FROM herald.cleanup_policy p)
         AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id))));
