-- name: TokensDrop
-- Drops every refresh token stored for an account (Apple no longer honours them: consent
-- withdrawn, or the Apple ID deleted), without revoking: how many.
-- param accountID: text
-- column dropped: integer
WITH gone AS (DELETE FROM herald.apple_tokens WHERE account_id = $1::text RETURNING 1) SELECT count(*)::int FROM gone;
