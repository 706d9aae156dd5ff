-- name: JobRevoked
-- Apple revoked the token: the job `revoked` (`reason`: '' for none), with its calls
-- (herald.apple_attempts), and the stored token deleted if it is still the one revoked (`nonce`
-- names the seal: a token stored meanwhile by a new sign-in stays); only while the job is
-- `calling`. `httpStatus` is the last call's (-1 for none). The calls are the columns of
-- `DeliveryAttempt`s in order: -1 for no HTTP status, '' for no error code or message id.
-- param messageID: text
-- param httpStatus: integer
-- param accountID: text
-- param clientID: text
-- param nonce: bytea
-- param reason: text
-- params attempts: DeliveryAttempts
WITH v AS (
    UPDATE herald.apple_jobs SET state = 'revoked', owner_key = NULL, http_status = NULLIF($2::int, -1), reason = NULLIF($6::text, ''), updated_at = now()
     WHERE message_id = $1::text AND state = 'calling' RETURNING message_id
), a AS (
    INSERT INTO herald.apple_attempts (message_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.message_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($7::text[], $8::text[], $9::int[], $10::text[], $11::text[], $12::int[]) AS t(p, r, h, e, m, d)
)
DELETE FROM herald.apple_tokens WHERE account_id = $3::text AND client_id = $4::text AND nonce = $5::bytea AND EXISTS (SELECT 1 FROM v);
