-- name: ReceiptPrepare
-- Decides a `push.verification` job (functions/push_prepare.sql says how): records the receipt
-- (or finds it) and stores the secret's hash, or says why nothing is pushed.
-- param receipt: text
-- param messageID: text
-- param platform: text
-- param environment: text
-- param appID: text
-- param tokenHash: text
-- param tokenHint: text
-- param keyID: text
-- param secretHash: bytea
-- param ttlSeconds: integer
-- param rateMax: integer
-- param rateWindowSeconds: integer
-- param ownerKey: bigint
-- column decision: text
-- column reason: text?
-- column uncertain: boolean
SELECT o_decision, o_reason, o_uncertain FROM herald.push_prepare(
    $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text,
    $8::text, $9::bytea, $10::int, $11::int, $12::int, $13::bigint);
