-- name: ReceiptSent
-- The provider accepted the push: the receipt `sent` with its provider calls
-- (herald.push_send_attempts), and its token healthy (valid again if it was not), only when the
-- receipt was `sending`. `provider`, `providerMessageID` and `httpStatus` are the last call's
-- ('' and -1 for none). The calls are the columns of `DeliveryAttempt`s in order: -1 for no HTTP
-- status, '' for no error code or message id.
-- param receipt: text
-- param provider: text
-- param providerMessageID: text
-- param httpStatus: integer
-- param tokenHash: text
-- params attempts: DeliveryAttempts
WITH v AS (
    UPDATE herald.push_verifications
       SET state = 'sent', provider = $2::text, provider_message_id = NULLIF($3::text, ''), http_status = NULLIF($4::int, -1),
           reason = NULL, updated_at = now()
     WHERE receipt = $1::text AND state = 'sending' RETURNING receipt
), a AS (
    INSERT INTO herald.push_send_attempts (receipt, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.receipt, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::int[]) AS t(p, r, h, e, m, d)
)
UPDATE herald.device_tokens
   SET status = 'valid', reason = NULL, detail = NULL, invalid_since = NULL,
       pushes = pushes + 1, last_success_at = now(), updated_at = now()
 WHERE token_hash = $5::text AND EXISTS (SELECT 1 FROM v);
