-- name: FallbackEnd
-- A fallback that ends (functions/sms_fallback_end.sql): the verification keeps `reason`; with
-- `checkOwner`, not while a live worker sends it.
-- param verificationID: text
-- param messageID: text
-- param reason: text
-- param checkOwner: boolean
-- column ended: bigint
SELECT count(*) FROM herald.sms_fallback_end($1::text, $2::text, $3::text, $4::boolean);
