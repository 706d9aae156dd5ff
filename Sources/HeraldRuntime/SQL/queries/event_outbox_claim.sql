-- name: EventOutboxClaim
-- Claims up to `limit` rows of an exchange for `seconds`, oldest first: unclaimed ones, or ones
-- whose claim ran out; skipping those another relay is claiming now (the event relay's pass).
-- param exchange: text
-- param limit: integer
-- param seconds: integer
-- column id: bigint
-- column name: text
-- column messageID: text
-- column body: text
-- column createdAt: timestamp with time zone
-- column routingKey: text?
-- column replyTo: text?
-- column correlationID: text?
-- column traceparent: text?
-- column tracestate: text?
WITH batch AS (
    SELECT id, created_at FROM herald.event_outbox
     WHERE exchange = $1::text AND (claimed_until IS NULL OR claimed_until < now())
     ORDER BY id LIMIT $2::int FOR UPDATE SKIP LOCKED)
UPDATE herald.event_outbox e SET claimed_until = now() + make_interval(secs => $3::int)
  FROM batch WHERE e.id = batch.id AND e.created_at = batch.created_at
RETURNING e.id, e.name, e.message_id, e.body, e.created_at, e.routing_key, e.reply_to, e.correlation_id, e.traceparent, e.tracestate;
