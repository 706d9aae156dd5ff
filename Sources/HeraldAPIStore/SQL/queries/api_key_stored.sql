-- name: APIKeyStored
-- The row of one API key, with the HMAC of its secret to judge a presented one against.
-- param id: text
-- column keyName: text
-- column scopes: text[]
-- column keyID: text
-- column secretHash: bytea
-- column createdAt: timestamp with time zone
-- column expiresAt: timestamp with time zone?
-- column revokedAt: timestamp with time zone?
-- column lastUsedAt: timestamp with time zone?
-- column assertsClientIP: boolean
SELECT name, scopes, key_id, secret_hash, created_at, expires_at, revoked_at, last_used_at, asserts_client_ip
  FROM herald.api_keys WHERE id = $1::text;
