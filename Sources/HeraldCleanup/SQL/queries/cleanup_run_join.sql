-- name: CleanupRunJoin
-- A worker joins a run: `scheduled` becomes `running`; the first to join records the policy
-- (retention, enabled_at) and, for a run that deletes, how many accounts it may delete now
-- (CleanupEligibility, for progress). The run as it is now; no row for an unknown id.
-- param id: text
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
UPDATE herald.cleanup_runs r
   SET status = CASE WHEN r.status = 'scheduled' THEN 'running' ELSE r.status END,
       started_at = coalesce(r.started_at, now()),
       heartbeat_at = CASE WHEN r.status IN ('scheduled', 'running') THEN now() ELSE r.heartbeat_at END,
       joins = r.joins + 1,
       retention = coalesce(r.retention, p.retention),
       enabled_at = coalesce(r.enabled_at, p.enabled_at),
       eligible_at_start = CASE WHEN r.started_at IS NULL AND NOT r.dry_run
           THEN (SELECT count(*) FROM herald.accounts a
                  WHERE ((a.delete_after < now()
                          AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id))
                      OR (a.delete_after IS NULL
                          AND a.created_at < (SELECT CASE WHEN p.enabled THEN CASE WHEN p.enabled_at + p.retention < now() THEN now() - p.retention END
                                                          WHEN p.kept_enabled_at + p.kept_retention < now() THEN least(p.kept_until, now() - p.kept_retention) END
                                                FROM herald.cleanup_policy p)
                          AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id))))
           ELSE r.eligible_at_start END
  FROM herald.cleanup_policy p
 WHERE r.id = $1::text
RETURNING r.id, r.status, r.dry_run, r.max_accounts, r.fan_out, r.requested_at, r.started_at, r.ended_at, r.heartbeat_at,
          r.eligible_at_start, r.accounts_deleted, r.purged::text, r.batches, r.joins, r.reason, r.paused_ms;
