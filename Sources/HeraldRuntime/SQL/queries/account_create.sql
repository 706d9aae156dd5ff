-- name: AccountCreate
-- Creates an account, signed in at once: anonymous (Firebase's `signInAnonymously`) or signed
-- up with a provider. No row when the id exists.
-- param id: text
-- param isAnonymous: boolean
-- column created: integer
INSERT INTO herald.accounts (id, is_anonymous, last_sign_in_at) VALUES ($1::text, $2::boolean, now())
ON CONFLICT (id) DO NOTHING RETURNING 1;
