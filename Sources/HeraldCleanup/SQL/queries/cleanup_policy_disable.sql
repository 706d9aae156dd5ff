-- name: CleanupPolicyDisable
-- Switches cleanup off, freezing its schedule (`kept_enabled_at`, `kept_retention`,
-- `kept_until` = now); no-op when already off.
UPDATE herald.cleanup_policy
   SET enabled = false, kept_enabled_at = enabled_at, kept_retention = retention, kept_until = now(), updated_at = now()
 WHERE enabled;
