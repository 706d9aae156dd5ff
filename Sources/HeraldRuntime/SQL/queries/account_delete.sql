-- name: AccountDelete
-- Deletes an account (its provider links go with it; the triggers on herald.accounts add their
-- work to the transaction). No row when it does not exist.
-- param id: text
-- column createdAt: timestamp with time zone
-- column deletedAt: timestamp with time zone
DELETE FROM herald.accounts WHERE id = $1::text RETURNING created_at, now();
