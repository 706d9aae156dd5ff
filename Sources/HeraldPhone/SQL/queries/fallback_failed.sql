-- name: FallbackFailed
-- A `sms.fallback` job whose channels all refused, or whose next channel was not wanted, with its
-- provider calls: the fallback ends (functions/sms_fallback_end.sql), the verification (still
-- `sent`) keeps `reason` (NULL: none). The calls are the columns of `DeliveryAttempt`s: -1 for no
-- HTTP status, '' for no error code or message id.
-- param verificationID: text
-- param messageID: text
-- param reason: text?
-- params attempts: DeliveryAttempts
-- column ended: bigint
WITH v AS (
    SELECT * FROM herald.sms_fallback_end($1::text, $2::text, $3::text, false)
), a AS (
    INSERT INTO herald.sms_send_attempts (verification_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.verification_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::int[]) AS t(p, r, h, e, m, d)
)
SELECT count(*) FROM v;
