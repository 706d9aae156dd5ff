-- name: RequestSent
-- A request delivered to a provider (`state`: `sent`, or `noted` for the no-account note), with
-- its provider calls (herald.email_send_attempts), written only when the request was `sending`.
-- `provider` and `providerMessageID` are the accepting call's ('' for none). The calls are the
-- columns of `DeliveryAttempt`s in order: -1 for no HTTP status, '' for no error code or message id.
-- param requestID: text
-- param state: text
-- param provider: text
-- param providerMessageID: text
-- param uncertainSends: integer
-- params attempts: DeliveryAttempts
-- column changed: bigint
WITH v AS (
    UPDATE herald.email_requests
       SET state = $2::text, reason = NULL, provider = NULLIF($3::text, ''), provider_message_id = NULLIF($4::text, ''),
           uncertain_sends = uncertain_sends + $5::int, updated_at = now()
     WHERE request_id = $1::text AND state = 'sending'
    RETURNING request_id
), a AS (
    INSERT INTO herald.email_send_attempts (request_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.request_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::int[]) AS t(p, r, h, e, m, d)
)
SELECT count(*) FROM v;
