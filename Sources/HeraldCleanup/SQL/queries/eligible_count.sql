-- name: EligibleCount
-- How many accounts a run would delete now, and the oldest one's creation (CleanupEligibility:
-- a kept date passed, or a date from the policy as it is now).
-- column count: bigint
-- column oldestCreatedAt: timestamp with time zone?
SELECT count(*)::bigint, min(a.created_at) FROM herald.accounts a
 WHERE ((a.delete_after < now()
         AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id))
     OR (a.delete_after IS NULL
         AND a.created_at < (SELECT CASE WHEN p.enabled THEN CASE WHEN p.enabled_at + p.retention < now() THEN now() - p.retention END
                                         WHEN p.kept_enabled_at + p.kept_retention < now() THEN least(p.kept_until, now() - p.kept_retention) END
                               FROM herald.cleanup_policy p)
         AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id)));
