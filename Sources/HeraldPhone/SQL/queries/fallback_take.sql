-- name: FallbackTake
-- Decides a `sms.fallback` job: may the verification's next channel go out now
-- (functions/sms_fallback_take.sql says how). The send limits are the request's, in order.
-- param verificationID: text
-- param step: integer
-- param reason: text
-- param messageID: text
-- param ownerKey: bigint
-- param scopes: text[]
-- param keys: text[]
-- param windows: integer[]
-- param maxes: integer[]
-- param paused: text?
-- param maxPaidSends: integer
-- column decision: text
-- column reason: text?
-- column uncertain: boolean
-- column channels: text[]?
-- column job: text?
-- column keyID: text?
-- column nonce: bytea?
-- column ciphertext: bytea?
-- column tag: bytea?
SELECT o_decision, o_reason, o_uncertain, o_channels, o_job::text, o_key_id, o_nonce, o_ciphertext, o_tag
  FROM herald.sms_fallback_take($1::text, $2::int, $3::text, $4::text, $5::bigint, $6::text[], $7::text[], $8::int[], $9::int[],
                                $10::text, $11::int);
