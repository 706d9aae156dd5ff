-- name: ReceiptRetrying
-- Every provider failed: the receipt waits to be tried again with a fresh secret (the old one is
-- void), with its provider calls, only when it was `sending`. A call that timed out may have
-- delivered the push all the same (`uncertainSends`). `provider` and `httpStatus` are the last
-- call's ('' and -1 for none). The calls are the columns of `DeliveryAttempt`s in order: -1 for
-- no HTTP status, '' for no error code or message id.
-- param receipt: text
-- param provider: text
-- param httpStatus: integer
-- param reason: text
-- param uncertainSends: integer
-- params attempts: DeliveryAttempts
-- column changed: bigint
WITH v AS (
    UPDATE herald.push_verifications
       SET state = 'retrying', secret_status = 'void', secret_hash = NULL,
           provider = $2::text, http_status = NULLIF($3::int, -1), reason = $4::text,
           uncertain_sends = uncertain_sends + $5::int, updated_at = now()
     WHERE receipt = $1::text AND state = 'sending' RETURNING receipt
), a AS (
    INSERT INTO herald.push_send_attempts (receipt, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.receipt, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM v, unnest($6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::int[]) AS t(p, r, h, e, m, d)
)
SELECT count(*) FROM v;
