-- name: CodePrepare
-- Decides an `email.code` job (functions/email_otp_prepare.sql says how): send, reuse the code
-- mailed moments ago, or record why not. The send limits are the request's, in order.
-- param verificationID: text
-- param messageID: text
-- param email: text
-- param purpose: text
-- param force: boolean
-- param keyID: text
-- param codeHash: bytea
-- param ttlSeconds: integer
-- param maxAttempts: integer
-- param resendIntervalSeconds: integer
-- param scopes: text[]
-- param keys: text[]
-- param windows: integer[]
-- param maxes: integer[]
-- param ownerKey: bigint
-- param guessLimit: integer
-- param guessWindowSeconds: integer
-- param lockoutSeconds: integer
-- param lockoutMaxSeconds: integer
-- param tenant: text
-- column decision: text
-- column reason: text?
-- column uncertain: boolean
SELECT o_decision, o_reason, o_uncertain FROM herald.email_otp_prepare(
    $1::text, $2::text, $3::text, $4::text, $5::boolean, $6::text, $7::bytea, $8::int, $9::int, $10::int,
    $11::text[], $12::text[], $13::int[], $14::int[], $15::bigint, $16::int, $17::int, $18::int, $19::int, $20::text);
