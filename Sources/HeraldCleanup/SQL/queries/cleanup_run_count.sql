-- name: CleanupRunCount
-- Adds a batch to its run's counts: `accounts` deleted, or `purgedRows` purged from target `target`
-- ('' for none), and the pause taken before it. No row when the run was cancelled or the
-- batch would pass the cap (the batch then rolls back); counting after another worker
-- completed the run is allowed (its `ended_at` moves to now).
-- param accounts: bigint
-- param target: text
-- param purgedRows: bigint
-- param pausedMilliseconds: bigint
-- param runID: text
-- column counted: integer
UPDATE herald.cleanup_runs
   SET accounts_deleted = accounts_deleted + $1::bigint,
       purged = CASE WHEN $2::text = '' THEN purged
                     ELSE jsonb_set(purged, ARRAY[$2::text], to_jsonb(coalesce((purged ->> $2::text)::bigint, 0) + $3::bigint)) END,
       batches = batches + 1,
       paused_ms = paused_ms + $4::bigint,
       heartbeat_at = now(),
       ended_at = CASE WHEN ended_at IS NULL THEN NULL ELSE greatest(ended_at, now()) END
 WHERE id = $5::text AND status IN ('running', 'completed')
   AND accounts_deleted + $1::bigint <= max_accounts
RETURNING 1;
