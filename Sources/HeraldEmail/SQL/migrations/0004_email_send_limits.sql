-- herald:legacy-version 15
-- Email send limits per address, client IP and global, in sliding windows (email_rate_take).

-- squawk-ignore-file prefer-bigint-over-int, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: count is the sends of one counter's bucket (a tenth of a window).
-- why: require-lock-timeout, require-statement-timeout: the index is on a table created above in
--   this transaction: no other session can hold a lock on it or have written a row to it.

-- Buckets of a tenth of their window, as herald.sms_rate_counters (scope: email_address,
-- ip, global; key: the normal-form address, the client's address or /64, a shard).
CREATE TABLE herald.email_rate_counters (
    scope         text NOT NULL,
    key           text NOT NULL,
    window_start  timestamptz NOT NULL,
    count         integer NOT NULL,
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (scope, key, window_start)
);
CREATE INDEX email_rate_counters_expires_idx ON herald.email_rate_counters (expires_at);
-- herald.email_rate_take was created here: now functions/email_rate_take.sql.
-- herald.email_prepare was created here with new arguments (the old signature dropped): now
-- functions/email_prepare.sql.
-- why: ban-drop-function: the previous signature of email_prepare, whose only callers are Herald's
--   own email workers: from legacy version 15 on they call the new one
--   (functions/email_prepare.sql), and the old overload would stay behind, stale. Workers of an
--   older release lose it when this runs: migrate, then roll out (docs/operations.md, "Upgrades").
-- squawk-ignore ban-drop-function
DROP FUNCTION IF EXISTS herald.email_prepare(text, text, text, text, text, bigint, text, bytea, jsonb, integer, text, text, text);
