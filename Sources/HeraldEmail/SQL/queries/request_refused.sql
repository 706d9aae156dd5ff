-- name: RequestRefused
-- A request refused before any send (mail to a private relay address Apple does not forward to):
-- recorded `failed` with `reason`, or a try of it waiting in a delay queue (`retrying`) or a
-- recovery notice Herald queued (`queued`) ended, its pending codes dead. A request decided
-- otherwise, or recorded for another address or mode, is left alone; no recover_email request is
-- made here (only Herald enqueues those). `changed`: how many requests were written (0 or 1).
-- param requestID: text
-- param messageID: text
-- param email: text
-- param mode: text
-- param reason: text
-- column changed: integer
WITH v AS (
    INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, reason)
    SELECT $1::text, $2::text, $3::text, $4::text, 'failed', $5::text WHERE $4::text <> 'recover_email'
    ON CONFLICT (request_id) DO UPDATE
       SET state = 'failed', reason = EXCLUDED.reason, message_id = EXCLUDED.message_id, owner_key = NULL, updated_at = now()
     WHERE herald.email_requests.state IN ('queued', 'retrying')
       AND herald.email_requests.email = EXCLUDED.email AND herald.email_requests.mode = EXCLUDED.mode
    RETURNING request_id
), codes AS (
    UPDATE herald.email_codes SET status = 'failed' WHERE request_id IN (SELECT request_id FROM v) AND status = 'pending'
)
SELECT count(*)::int FROM v;
