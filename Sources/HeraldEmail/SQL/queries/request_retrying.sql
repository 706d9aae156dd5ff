-- name: RequestRetrying
-- Every provider failed: the request waits to be tried again with a fresh code, with its
-- provider calls, written only when the request was `sending`. The calls are the columns of
-- `DeliveryAttempt`s in order: -1 for no HTTP status, '' for no error code or message id.
-- param requestID: text
-- param reason: text
-- param uncertainSends: integer
-- params attempts: DeliveryAttempts
-- column changed: bigint
WITH v AS (
    UPDATE herald.email_requests
       SET state = 'retrying', reason = $2::text, uncertain_sends = uncertain_sends + $3::int, updated_at = now()
     WHERE request_id = $1::text AND state = 'sending'
    RETURNING request_id
), a AS (
    INSERT INTO herald.email_send_attempts (request_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.request_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::int[]) AS t(p, r, h, e, m, d)
)
SELECT count(*) FROM v;
