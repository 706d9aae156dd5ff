-- name: CleanupPolicyRetention
-- Changes only the retention (cleanup stays on or off).
-- param retentionSeconds: bigint
UPDATE herald.cleanup_policy SET retention = make_interval(secs => $1::bigint), updated_at = now();
