-- name: AccountSignIn
-- Records a sign-in. No row when the account does not exist.
-- param accountID: text
-- column found: integer
UPDATE herald.accounts SET last_sign_in_at = now() WHERE id = $1::text RETURNING 1;
