-- herald.sms_send_attempts becomes partitioned by day (UTC) of created_at, as the job ledger in runtime
-- migration 0007: the table as it is becomes the partition sms_send_attempts_legacy, nothing is copied,
-- and retention drops whole days (cleanup, herald.partitions_drop).
-- squawk-ignore-file require-lock-timeout, require-statement-timeout, constraint-missing-not-valid, adding-serial-primary-key-field, require-concurrent-index-creation
-- why: require-lock-timeout, require-statement-timeout: the conversion holds the table's ACCESS
--   EXCLUSIVE lock for the attach's scan and the new key's index build; a timeout would only
--   make a large table's migration fail.
-- why: constraint-missing-not-valid, adding-serial-primary-key-field, require-concurrent-index-creation: a new
--   partitioned table's key and indexes (no CONCURRENTLY or NOT VALID there); each one on the
--   legacy partition is built under the lock the conversion holds anyway.
SELECT herald.partition_by_day('herald.sms_send_attempts', 'created_at');
ALTER TABLE herald.sms_send_attempts ADD PRIMARY KEY (id, created_at);
CREATE INDEX sms_send_attempts_created_idx ON herald.sms_send_attempts (created_at);
CREATE INDEX sms_send_attempts_verification_idx ON herald.sms_send_attempts (verification_id);
