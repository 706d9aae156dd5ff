-- name: CodeExpire
-- A code checked after its time: expired.
-- param codeID: bigint
UPDATE herald.sms_codes SET status = 'expired', finished_at = now() WHERE id = $1::bigint;
