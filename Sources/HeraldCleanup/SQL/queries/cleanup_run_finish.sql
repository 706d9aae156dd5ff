-- name: CleanupRunFinish
-- Ends an active run with `status` (no-op for one that has ended); `reason` replaces the run's when given.
-- param status: text as CleanupRun.Status
-- param reason: text?
-- param id: text
UPDATE herald.cleanup_runs SET status = $1::text, ended_at = now(), heartbeat_at = now(),
       reason = coalesce($2::text, reason)
 WHERE id = $3::text AND status IN ('scheduled', 'running');
