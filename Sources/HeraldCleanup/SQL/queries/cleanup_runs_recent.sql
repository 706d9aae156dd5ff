-- name: CleanupRunsRecent
-- The latest runs, newest first.
-- param limit: bigint
-- column id: text
-- column status: text as CleanupRun.Status
-- column dryRun: boolean
-- column maxAccounts: bigint
-- column fanOut: integer
-- column requestedAt: timestamp with time zone
-- column startedAt: timestamp with time zone?
-- column endedAt: timestamp with time zone?
-- column heartbeatAt: timestamp with time zone
-- column eligibleAtStart: bigint?
-- column accountsDeleted: bigint
-- column purged: text
-- column batches: bigint
-- column joins: integer
-- column reason: text?
-- column pausedMilliseconds: bigint
SELECT id, status, dry_run, max_accounts, fan_out, requested_at, started_at, ended_at, heartbeat_at,
       eligible_at_start, accounts_deleted, purged::text, batches, joins, reason, paused_ms
  FROM herald.cleanup_runs ORDER BY requested_at DESC, id LIMIT $1::bigint;
