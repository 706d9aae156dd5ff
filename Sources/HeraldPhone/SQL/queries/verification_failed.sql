-- name: VerificationFailed
-- A permanent failure, with its provider calls: the verification `failed` (while `sending` or
-- `retrying`) and its code closed, so the next request sends a fresh one. The calls are the
-- columns of `DeliveryAttempt`s: -1 for no HTTP status, '' for no error code or message id.
-- param verificationID: text
-- param reason: text
-- params attempts: DeliveryAttempts
WITH v AS (
    UPDATE herald.sms_verifications SET state = 'failed', reason = $2::text, updated_at = now()
     WHERE verification_id = $1::text AND state IN ('sending', 'retrying')
    RETURNING verification_id, code_id
), a AS (
    INSERT INTO herald.sms_send_attempts (verification_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.verification_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::int[]) AS t(p, r, h, e, m, d)
)
UPDATE herald.sms_codes SET status = 'failed', finished_at = now() WHERE id IN (SELECT code_id FROM v) AND status = 'pending';
