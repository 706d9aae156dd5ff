-- name: JobOutboxInsert
-- A job into the outbox (published after the commit by the jobs exchange's relay): the
-- exchange, the job's name (its routing key), message id and body, the request's correlation
-- id, the queue that waits for its decision, and the publish span's W3C trace context.
-- param exchange: text
-- param name: text
-- param messageID: text
-- param body: text
-- param correlationID: text?
-- param replyTo: text?
-- param traceparent: text?
-- param tracestate: text?
INSERT INTO herald.event_outbox (exchange, name, message_id, body, correlation_id, reply_to, traceparent, tracestate)
VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text);
