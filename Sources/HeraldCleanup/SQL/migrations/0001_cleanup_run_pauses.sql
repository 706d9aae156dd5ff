-- herald:legacy-version 25
-- What a cleanup run paused to leave the database to live traffic (paused_ms).

-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: a NOT NULL column with a constant default
--   is a catalogue change on PostgreSQL 11 and later (no rewrite, no scan); herald.cleanup_runs'
--   ACCESS EXCLUSIVE lock lasts that write, and waits only behind a long transaction on the table
--   (one row per cleanup run). Frozen: a SET would be a new statement.
ALTER TABLE herald.cleanup_runs ADD COLUMN paused_ms bigint NOT NULL DEFAULT 0;
