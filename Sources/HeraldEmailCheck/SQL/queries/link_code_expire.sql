-- name: LinkCodeExpire
-- A link code used after its expiry: `expired` from now on.
-- param id: bigint
UPDATE herald.email_codes SET status = 'expired' WHERE id = $1::bigint;
