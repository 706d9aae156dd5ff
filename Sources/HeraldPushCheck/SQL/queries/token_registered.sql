-- name: TokenRegistered
-- The app registered a token again at `registeredAt`: an invalid token whose invalidity predates
-- that becomes valid (a row when it did).
-- param tokenHash: text
-- param registeredAt: timestamp with time zone
-- column tokenHash: text
UPDATE herald.device_tokens SET status = 'valid', reason = NULL, detail = NULL, invalid_since = NULL, updated_at = now()
 WHERE token_hash = $1::text AND status = 'invalid' AND invalid_since < $2::timestamptz
RETURNING token_hash;
