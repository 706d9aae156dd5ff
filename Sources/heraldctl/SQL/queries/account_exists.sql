-- name: AccountExists
-- Whether the account exists.
-- param accountID: text
-- column exists: boolean
SELECT EXISTS (SELECT 1 FROM herald.accounts WHERE id = $1::text);
