-- name: AppReceiptConsume
-- A silent-push receipt offered as app verification, consumed once for this verification
-- (HeraldPush's herald.push_receipt_consume): `ok`, or why not.
-- param receipt: text
-- param appID: text
-- param maxAgeSeconds: integer
-- param verificationID: text
-- column outcome: text
SELECT herald.push_receipt_consume($1::text, $2::text, $3::int, $4::text);
