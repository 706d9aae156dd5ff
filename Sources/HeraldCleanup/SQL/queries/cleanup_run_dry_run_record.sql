-- name: CleanupRunDryRunRecord
-- Records a finished dry run's report: completed, with what a run would have deleted
-- (`purged`: a JSON object of rows per purge target).
-- param eligible: bigint
-- param purged: text
-- param id: text
UPDATE herald.cleanup_runs SET status = 'completed', started_at = coalesce(started_at, now()),
       ended_at = now(), heartbeat_at = now(), eligible_at_start = $1::bigint,
       purged = $2::text::jsonb, reason = 'dry run: nothing deleted'
 WHERE id = $3::text;
