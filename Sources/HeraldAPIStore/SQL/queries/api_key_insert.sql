-- name: APIKeyInsert
-- A new API key: its name, scopes and the HMAC of its secret (never the secret); its creation time.
-- param id: text
-- param keyName: text
-- param scopes: text[]
-- param keyID: text
-- param secretHash: bytea
-- param expiresAt: timestamp with time zone?
-- param assertsClientIP: boolean
-- column createdAt: timestamp with time zone
INSERT INTO herald.api_keys (id, name, scopes, key_id, secret_hash, expires_at, asserts_client_ip)
VALUES ($1::text, $2::text, $3::text[], $4::text, $5::bytea, $6::timestamptz, $7::boolean)
RETURNING created_at;
