-- name: AppleTokensOfAccount
-- The Sign in with Apple refresh tokens stored for an account (never the token), by client id;
-- times as RFC 3339 text in the session's time zone.
-- param accountID: text
-- column clientID: text
-- column keyID: text
-- column storedAt: text
-- column updatedAt: text
SELECT client_id, key_id, to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'), to_char(updated_at, 'YYYY-MM-DD"T"HH24:MI:SSOF')
  FROM herald.apple_tokens WHERE account_id = $1::text ORDER BY client_id;
