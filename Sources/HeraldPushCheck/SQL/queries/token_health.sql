-- name: TokenHealth
-- What Herald knows about one device token (by its hash).
-- param tokenHash: text
-- column platform: text
-- column hint: text
-- column appID: text
-- column environment: text
-- column status: text
-- column reason: text?
-- column detail: text?
-- column invalidSince: timestamp with time zone?
-- column pushes: bigint
-- column failures: bigint
-- column lastSuccessAt: timestamp with time zone?
-- column lastFailureAt: timestamp with time zone?
SELECT platform, token_hint, app_id, environment, status, reason, detail, invalid_since, pushes, failures, last_success_at, last_failure_at
  FROM herald.device_tokens WHERE token_hash = $1::text;
