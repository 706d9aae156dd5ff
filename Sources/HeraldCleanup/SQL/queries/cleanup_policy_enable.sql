-- name: CleanupPolicyEnable
-- Switches cleanup on: `enabled_at` set when it was off, kept when it was on; the retention
-- changed when `retentionSeconds` is given; the frozen schedule forgotten (enable wrote it).
-- param retentionSeconds: bigint?
UPDATE herald.cleanup_policy
   SET enabled_at = CASE WHEN enabled THEN enabled_at ELSE now() END,
       enabled = true,
       retention = coalesce(make_interval(secs => $1::bigint), retention),
       kept_enabled_at = NULL, kept_retention = NULL, kept_until = NULL,
       updated_at = now();
