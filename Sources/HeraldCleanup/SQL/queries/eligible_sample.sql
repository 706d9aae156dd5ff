-- name: EligibleSample
-- Ids of at most `limit` accounts a run may delete (CleanupEligibility): the kept dates by
-- their index (oldest first), then the policy's dates by theirs (oldest created first).
-- param limit: integer
-- column id: text
SELECT * FROM (SELECT a.id FROM herald.accounts a
                WHERE a.delete_after < now()
                  AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id)
                ORDER BY a.delete_after LIMIT $1::integer) kept
UNION ALL
SELECT * FROM (SELECT a.id FROM herald.accounts a
                WHERE a.delete_after IS NULL
                  AND a.created_at < (SELECT CASE WHEN p.enabled THEN CASE WHEN p.enabled_at + p.retention < now() THEN now() - p.retention END
                                                  WHEN p.kept_enabled_at + p.kept_retention < now() THEN least(p.kept_until, now() - p.kept_retention) END
                                        FROM herald.cleanup_policy p)
                  AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id)
                ORDER BY a.created_at LIMIT $1::integer) computed
LIMIT $1::integer;
