-- name: EventsInsert
-- Events into the outbox, in the caller's transaction: the exchange; names, message ids, bodies.
-- param exchange: text
-- param names: text[]
-- param messageIDs: text[]
-- param bodies: text[]
INSERT INTO herald.event_outbox (exchange, name, message_id, body)
SELECT $1::text, * FROM unnest($2::text[], $3::text[], $4::text[]);
