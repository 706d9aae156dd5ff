-- name: PreviewDays
-- The anonymous, unlinked accounts by the UTC day their deletion date falls on if
-- cleanup were enabled now with `retentionSeconds`, counting from the policy's `enabled_at`
-- (enabled) or now (disabled); a NULL day first: dates already passed. `kept`: of those,
-- accounts whose date is kept (written, or from the frozen schedule). One snapshot: "now",
-- the policy and the accounts agree.
-- param retentionSeconds: bigint
-- column countsFrom: timestamp with time zone
-- column day: text?
-- column accounts: bigint
-- column kept: bigint
WITH p AS (SELECT CASE WHEN enabled THEN enabled_at ELSE now() END AS counts_from,
                  $1::bigint::float8 AS preview_retention, kept_enabled_at, kept_retention, kept_until
             FROM herald.cleanup_policy),
     dated AS (SELECT coalesce(a.delete_after,
                               CASE WHEN a.created_at < p.kept_until THEN greatest(a.created_at, p.kept_enabled_at) + p.kept_retention END,
                               greatest(a.created_at, p.counts_from) + make_interval(secs => p.preview_retention)) AS due,
                      (a.delete_after IS NOT NULL OR coalesce(a.created_at < p.kept_until, false)) AS kept
                 FROM herald.accounts a, p
                WHERE a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id))
SELECT (SELECT counts_from FROM p),
       CASE WHEN due < now() THEN NULL ELSE to_char(due AT TIME ZONE 'UTC', 'YYYY-MM-DD') END AS day,
       count(*)::bigint, (count(*) FILTER (WHERE kept))::bigint
  FROM dated GROUP BY day ORDER BY day NULLS FIRST;
