-- name: TokenKeptForRevoke
-- Apple exchanged the code of an `apple.revoke` job: the refresh token is stored (sealed) before
-- it is revoked, so a crash in between loses nothing, replacing an older one of the same account
-- and client id; the job stays `calling` with the step `revoke`, with its calls
-- (herald.apple_attempts); only while the job is `calling`. `httpStatus` is the last call's
-- (-1 for none). The calls are the columns of `DeliveryAttempt`s in order: -1 for no HTTP status,
-- '' for no error code or message id.
-- param messageID: text
-- param httpStatus: integer
-- param accountID: text
-- param clientID: text
-- param keyID: text
-- param nonce: bytea
-- param ciphertext: bytea
-- param tag: bytea
-- param jobsExchange: text
-- params attempts: DeliveryAttempts
WITH v AS (
    UPDATE herald.apple_jobs SET step = 'revoke', http_status = NULLIF($2::int, -1), updated_at = now()
     WHERE message_id = $1::text AND state = 'calling' RETURNING message_id
), a AS (
    INSERT INTO herald.apple_attempts (message_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.message_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($10::text[], $11::text[], $12::int[], $13::text[], $14::text[], $15::int[]) AS t(p, r, h, e, m, d)
)
INSERT INTO herald.apple_tokens (account_id, client_id, key_id, nonce, ciphertext, tag, jobs_exchange, message_id)
SELECT $3::text, $4::text, $5::text, $6::bytea, $7::bytea, $8::bytea, $9::text, $1::text FROM v
ON CONFLICT (account_id, client_id) DO UPDATE SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce,
    ciphertext = EXCLUDED.ciphertext, tag = EXCLUDED.tag, jobs_exchange = EXCLUDED.jobs_exchange,
    message_id = EXCLUDED.message_id, updated_at = now();
