-- name: JobFailed
-- A call refused for good (Apple's error, or a check of its answer): the job ends in `state`
-- (`failed`, or `uncertain` when Apple refused a code an earlier call may have exchanged), with
-- its calls (herald.apple_attempts); only while the job is `calling`. `httpStatus` is the last
-- call's (-1 for none). `changed`: how many jobs changed (0 or 1). The calls are the columns of
-- `DeliveryAttempt`s in order: -1 for no HTTP status, '' for no error code or message id.
-- param messageID: text
-- param httpStatus: integer
-- param error: text
-- param reason: text
-- param uncertainCalls: integer
-- param state: text
-- params attempts: DeliveryAttempts
-- column changed: bigint
WITH v AS (
    UPDATE herald.apple_jobs SET state = $6::text, owner_key = NULL, http_status = NULLIF($2::int, -1), error = $3::text, reason = $4::text,
           uncertain_calls = uncertain_calls + $5::int, updated_at = now()
     WHERE message_id = $1::text AND state = 'calling' RETURNING message_id
), a AS (
    INSERT INTO herald.apple_attempts (message_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.message_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($7::text[], $8::text[], $9::int[], $10::text[], $11::text[], $12::int[]) AS t(p, r, h, e, m, d)
)
SELECT count(*) FROM v;
