-- name: APIKeyTouch
-- Notes that a key was used now (`last_used_at`).
-- param id: text
UPDATE herald.api_keys SET last_used_at = now() WHERE id = $1::text;
