-- name: ReceiptFailed
-- A receipt refused for good for a reason other than its token: `failed`, its secret void, with
-- its provider calls, only when it was `sending`. `provider` and `httpStatus` are the last call's
-- ('' and -1 for none). `changed`: how many receipts changed (0 or 1). The calls are the columns
-- of `DeliveryAttempt`s in order: -1 for no HTTP status, '' for no error code or message id.
-- param receipt: text
-- param provider: text
-- param httpStatus: integer
-- param reason: text
-- params attempts: DeliveryAttempts
-- column changed: bigint
WITH v AS (
    UPDATE herald.push_verifications
       SET state = 'failed', secret_status = 'void', secret_hash = NULL, provider = $2::text, http_status = NULLIF($3::int, -1),
           reason = $4::text, updated_at = now()
     WHERE receipt = $1::text AND state = 'sending' RETURNING receipt
), a AS (
    INSERT INTO herald.push_send_attempts (receipt, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.receipt, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::int[]) AS t(p, r, h, e, m, d)
)
SELECT count(*) FROM v;
