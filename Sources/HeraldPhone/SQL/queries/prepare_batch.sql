-- name: PrepareBatch
-- herald.sms_prepare_batch for a group of requests (functions/sms_prepare_batch.sql): their
-- ids, message ids, numbers, purposes, force and test flags, code hashes and tenants; the
-- limits of all, each row naming its request (1-based); then what the group shares. One row
-- per request: its index, decision, reason and whether an earlier try may have sent.
-- maxPaidSends: sms.fallback.max_paid_sends; NULL or 0, no budget.
-- param verificationIDs: text[]
-- param messageIDs: text[]
-- param phones: text[]
-- param purposes: text[]
-- param force: boolean[]
-- param test: boolean[]
-- param keyIDs: text[]
-- param digests: bytea[]
-- param ttlSeconds: integer
-- param maxAttempts: integer
-- param resendIntervalSeconds: integer
-- param limitRequests: integer[]
-- param scopes: text[]
-- param keys: text[]
-- param windows: integer[]
-- param maxes: integer[]
-- param ownerKey: bigint
-- param guessMaxFailures: integer
-- param guessWindowSeconds: integer
-- param guessLockoutSeconds: integer
-- param guessMaxLockoutSeconds: integer
-- param tenants: text[]
-- param maxPaidSends: integer?
-- (0 and NULL alike: no budget)
-- column index: integer
-- column decision: text
-- column reason: text?
-- column uncertain: boolean
SELECT o_i, o_decision, o_reason, o_uncertain FROM herald.sms_prepare_batch(
    $1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::boolean[], $7::text[], $8::bytea[],
    $9::int, $10::int, $11::int, $12::int[], $13::text[], $14::text[], $15::int[], $16::int[],
    $17::bigint, $18::int, $19::int, $20::int, $21::int, $22::text[], nullif($23::int, 0));
