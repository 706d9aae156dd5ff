-- name: VerificationRetrying
-- Every provider failed for now, with the calls: the verification `retrying` (while `sending`),
-- `uncertainSends` added (1 when a call timed out: it may have been delivered). The calls are
-- the columns of `DeliveryAttempt`s: -1 for no HTTP status, '' for no error code or message id.
-- param verificationID: text
-- param reason: text
-- param uncertainSends: integer
-- params attempts: DeliveryAttempts
-- column changed: bigint
WITH v AS (
    UPDATE herald.sms_verifications
       SET state = 'retrying', reason = $2::text, uncertain_sends = uncertain_sends + $3::int, updated_at = now()
     WHERE verification_id = $1::text AND state = 'sending'
    RETURNING verification_id, code_id
), a AS (
    INSERT INTO herald.sms_send_attempts (verification_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.verification_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::int[]) AS t(p, r, h, e, m, d)
)
SELECT count(*) FROM v;
