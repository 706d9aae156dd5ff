-- name: CleanupRunInsert
-- Inserts a `scheduled` run, unless one with the id exists or another run is active (the
-- unique partial index `cleanup_runs_one_active_idx` decides, race-free): then no row.
-- param id: text
-- param dryRun: boolean
-- param maxAccounts: bigint
-- param fanOut: integer
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
INSERT INTO herald.cleanup_runs (id, status, dry_run, max_accounts, fan_out)
VALUES ($1::text, 'scheduled', $2::boolean, $3::bigint, $4::integer)
ON CONFLICT DO NOTHING
RETURNING id, status, dry_run, max_accounts, fan_out, requested_at, started_at, ended_at, heartbeat_at,
       eligible_at_start, accounts_deleted, purged::text, batches, joins, reason, paused_ms;
