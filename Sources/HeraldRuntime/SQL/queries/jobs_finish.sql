-- name: JobsFinish
-- A batch's final outcomes (message ids, statuses, reasons: '' for none) and the events of the
-- same jobs (the events exchange; names, message ids, bodies), in one statement: both run to
-- completion whatever the final SELECT reads.
-- param messageIDs: text[]
-- param statuses: text[]
-- param reasons: text[]
-- param exchange: text
-- param eventNames: text[]
-- param eventMessageIDs: text[]
-- param eventBodies: text[]
WITH finished AS (
    UPDATE herald.job_runs AS j
       SET status = u.status, reason = NULLIF(u.reason, ''), finished_at = now(), updated_at = now(),
           lease_until = NULL, owner_key = NULL
      FROM unnest($1::text[], $2::text[], $3::text[]) AS u(message_id, status, reason)
     WHERE j.message_id = u.message_id
), events AS (
    INSERT INTO herald.event_outbox (exchange, name, message_id, body)
    SELECT $4::text, * FROM unnest($5::text[], $6::text[], $7::text[])
)
SELECT FROM (VALUES (1)) AS done;
