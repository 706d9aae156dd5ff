-- name: FallbackRecord
-- A `sms.fallback` job's send, with its provider calls (functions/sms_fallback_record.sql):
-- `sent` (the accepted call's provider and message id, the channel) or `retrying` (the reason);
-- `uncertainSends` added. The calls are the columns of `DeliveryAttempt`s: -1 for no HTTP
-- status, '' for no error code or message id. `recorded`: 1 when it applied.
-- param verificationID: text
-- param messageID: text
-- param result: text
-- param provider: text?
-- param providerMessageID: text?
-- param channel: text?
-- param reason: text?
-- param uncertainSends: integer
-- params attempts: DeliveryAttempts
-- column recorded: bigint
WITH v AS (
    SELECT * FROM herald.sms_fallback_record($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::int)
), a AS (
    INSERT INTO herald.sms_send_attempts (verification_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.verification_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($9::text[], $10::text[], $11::int[], $12::text[], $13::text[], $14::int[]) AS t(p, r, h, e, m, d)
)
SELECT count(*) FROM v;
