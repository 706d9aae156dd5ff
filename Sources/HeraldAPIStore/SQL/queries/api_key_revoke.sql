-- name: APIKeyRevoke
-- Revokes a key from now on and announces it on `channel` at the commit (its payload: the key's
-- id); no row when there is no such key or it was already revoked.
-- param id: text
-- param channel: text
-- column id: text
-- column notified: text
WITH revoked AS (UPDATE herald.api_keys SET revoked_at = now() WHERE id = $1::text AND revoked_at IS NULL RETURNING id)
SELECT id, pg_notify($2::text, id)::text FROM revoked;
