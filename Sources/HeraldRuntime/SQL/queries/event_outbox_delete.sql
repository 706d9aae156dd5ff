-- name: EventOutboxDelete
-- Deletes the outbox rows the broker confirmed.
-- param ids: bigint[]
DELETE FROM herald.event_outbox WHERE id = ANY ($1::bigint[]);
