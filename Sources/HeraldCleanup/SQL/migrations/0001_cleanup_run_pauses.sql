-- herald:legacy-version 25
-- What a cleanup run paused to leave the database to live traffic (paused_ms).

ALTER TABLE herald.cleanup_runs ADD COLUMN paused_ms bigint NOT NULL DEFAULT 0;
