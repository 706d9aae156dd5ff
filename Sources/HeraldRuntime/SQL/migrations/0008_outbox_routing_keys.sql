-- A routing key of its own for an outbox row (issue 35): a job Herald schedules for later goes to
-- the jobs exchange under a wait queue's key (`wait.sms.60s`: the queue holds it for its TTL, then
-- hands it to the kind's work queue), while its AMQP type stays the job's (`sms.fallback.v1`).
-- NULL: the row's name is its routing key, as before. The relay (EventRelay) reads both.
-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: a nullable column without a default changes
--   the catalog only (no rewrite, no scan); a timeout would only make the migration fail behind a
--   long reader.
ALTER TABLE herald.event_outbox ADD COLUMN routing_key text;
