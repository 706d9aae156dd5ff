-- name: APIKeysList
-- Every API key (never its secret's hash), newest first.
-- column id: text
-- column keyName: text
-- column scopes: text[]
-- column createdAt: timestamp with time zone
-- column expiresAt: timestamp with time zone?
-- column revokedAt: timestamp with time zone?
-- column lastUsedAt: timestamp with time zone?
-- column assertsClientIP: boolean
SELECT id, name, scopes, created_at, expires_at, revoked_at, last_used_at, asserts_client_ip
  FROM herald.api_keys ORDER BY created_at DESC, id;
