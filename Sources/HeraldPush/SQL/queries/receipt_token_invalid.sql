-- name: ReceiptTokenInvalid
-- The device token is dead: the receipt `failed` (its secret void) with its provider calls, and
-- the token `invalid` (`tokenReason`, `detail`, since `invalidSince`), only when the receipt was
-- `sending`. `provider` and `httpStatus` are the last call's ('' and -1 for none). The calls are
-- the columns of `DeliveryAttempt`s in order: -1 for no HTTP status, '' for no error code or
-- message id.
-- param receipt: text
-- param provider: text
-- param httpStatus: integer
-- param reason: text
-- param tokenHash: text
-- param tokenReason: text
-- param detail: text
-- param invalidSince: timestamp with time zone
-- params attempts: DeliveryAttempts
WITH v AS (
    UPDATE herald.push_verifications
       SET state = 'failed', secret_status = 'void', secret_hash = NULL, provider = $2::text, http_status = NULLIF($3::int, -1),
           reason = $4::text, updated_at = now()
     WHERE receipt = $1::text AND state = 'sending' RETURNING receipt
), a AS (
    INSERT INTO herald.push_send_attempts (receipt, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.receipt, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($9::text[], $10::text[], $11::int[], $12::text[], $13::text[], $14::int[]) AS t(p, r, h, e, m, d)
)
UPDATE herald.device_tokens
   SET status = 'invalid', reason = $6::text, detail = $7::text, invalid_since = $8::timestamptz,
       failures = failures + 1, last_failure_at = now(), updated_at = now()
 WHERE token_hash = $5::text AND EXISTS (SELECT 1 FROM v);
