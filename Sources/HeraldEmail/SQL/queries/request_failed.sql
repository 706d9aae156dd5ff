-- name: RequestFailed
-- A request failed for good (a provider's final refusal, or its job dead-lettered after its last
-- try), with its provider calls; its pending codes die with it. Only while `messageID` is the
-- request's latest try: a duplicate job that ran out of tries never fails a request another job
-- sent. `changed`: how many requests changed (0 or 1). The calls are the columns of
-- `DeliveryAttempt`s in order: -1 for no HTTP status, '' for no error code or message id.
-- param requestID: text
-- param reason: text
-- param messageID: text
-- params attempts: DeliveryAttempts
-- column changed: bigint
WITH v AS (
    UPDATE herald.email_requests SET state = 'failed', reason = $2::text, updated_at = now()
     WHERE request_id = $1::text AND message_id = $3::text AND state IN ('sending', 'retrying')
    RETURNING request_id
), a AS (
    INSERT INTO herald.email_send_attempts (request_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.request_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::int[]) AS t(p, r, h, e, m, d)
), codes AS (
    UPDATE herald.email_codes SET status = 'failed' WHERE request_id IN (SELECT request_id FROM v) AND status = 'pending'
)
SELECT count(*) FROM v;
