-- name: CleanupPolicyRead
-- The cleanup policy (its one row); the retention in whole seconds.
-- column enabled: boolean
-- column enabledAt: timestamp with time zone?
-- column retentionSeconds: bigint
-- column updatedAt: timestamp with time zone
-- column keptUntil: timestamp with time zone?
SELECT enabled, enabled_at, extract(epoch FROM retention)::bigint, updated_at, kept_until FROM herald.cleanup_policy;
