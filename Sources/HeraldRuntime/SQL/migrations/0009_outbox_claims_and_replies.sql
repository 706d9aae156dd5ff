-- The door decides (issue 45). herald-api writes the job a start enqueues into the outbox in the
-- transaction that records the start, never publishing inside it; the job's decision comes back
-- to the waiting request through its replies queue:
--   reply_to        the queue that waits for the worker's decision (the job's AMQP reply_to);
--   correlation_id  the request's correlation id (the job's AMQP correlation_id);
--   traceparent, tracestate  the W3C context of the request's publish span (the job's AMQP
--                   headers of the same names: the worker's spans continue the request's trace);
--   claimed_until   a relay's claim on the row: it publishes the rows it claimed outside any
--                   transaction and deletes those the broker confirmed; a row whose claim ran out
--                   (a relay that died mid-publish) is claimed again (at least once: consumers
--                   deduplicate by message id).
-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: nullable columns without a default change
--   the catalog only (no rewrite, no scan); a timeout would only make the migration fail behind a
--   long reader.
ALTER TABLE herald.event_outbox
    ADD COLUMN reply_to text,
    ADD COLUMN correlation_id text,
    ADD COLUMN traceparent text,
    ADD COLUMN tracestate text,
    ADD COLUMN claimed_until timestamptz;
