-- name: KeptDatesCount
-- How many anonymous, unlinked accounts hold a kept date: written (`delete_after`), or created
-- before the frozen schedule's `kept_until` (account_read.sql's `deletionDateKept`).
-- column count: bigint
SELECT count(*)::bigint FROM herald.accounts a, herald.cleanup_policy p
 WHERE a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id)
   AND (a.delete_after IS NOT NULL OR coalesce(a.created_at < p.kept_until, false));
