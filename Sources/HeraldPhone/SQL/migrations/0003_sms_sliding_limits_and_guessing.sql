-- herald:legacy-version 14
-- Sliding-window rate limits counted in one statement, and the guessing lockout per number and purpose.

-- herald.sms_rate_take was created here: now functions/sms_rate_take.sql.

-- squawk-ignore-file prefer-bigint-over-int, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: failures and lockouts count per number and purpose; the guessing
--   policy columns hold a limit and seconds from the configuration.
-- why: require-lock-timeout, require-statement-timeout: the index is on the table created in this
--   transaction. On a database upgraded from before legacy version 14, the ALTER takes
--   herald.sms_codes' ACCESS EXCLUSIVE lock for a catalogue change (nullable columns without a
--   default: no rewrite, no scan), which waits only behind a long transaction on the table. Frozen:
--   a SET would be a new statement.

-- Wrong codes per (number, purpose), across codes, reset by a success or by a quiet
-- guess_window (no failure for that long after the last one, or after the last lock).
CREATE TABLE herald.sms_guess_failures (
    phone_number     text NOT NULL,
    purpose          text NOT NULL,
    -- Wrong codes since the last lock (or the first failure of a quiet window).
    failures         integer NOT NULL DEFAULT 0,
    -- Locks so far: the next lasts lockout_seconds x 2^lockouts, capped.
    lockouts         integer NOT NULL DEFAULT 0,
    last_failure_at  timestamptz NOT NULL DEFAULT now(),
    locked_until     timestamptz,
    -- When the row no longer matters (purged after it).
    expires_at       timestamptz NOT NULL,
    PRIMARY KEY (phone_number, purpose)
);
CREATE INDEX sms_guess_failures_expires_idx ON herald.sms_guess_failures (expires_at);

-- The guessing policy the worker sent the code under (NULL before migration 14: the defaults).
ALTER TABLE herald.sms_codes
    ADD COLUMN guess_limit integer,
    ADD COLUMN guess_window_seconds integer,
    ADD COLUMN lockout_seconds integer,
    ADD COLUMN lockout_max_seconds integer;

-- herald.sms_prepare was created here with new arguments (the old signature dropped): now
-- functions/sms_prepare.sql.
-- why: ban-drop-function: the previous signature of sms_prepare, whose only callers are Herald's
--   own SMS workers: from legacy version 14 on they call the new one (functions/sms_prepare.sql),
--   and the old overload would stay behind, stale. Workers of an older release lose it when this
--   runs: migrate, then roll out (docs/operations.md, "Upgrades").
-- squawk-ignore ban-drop-function
DROP FUNCTION IF EXISTS herald.sms_prepare(text, text, text, text, boolean, boolean, text, bytea, integer, integer, integer,
                                           text[], text[], integer[], integer[], bigint);
-- herald.sms_guess_failed was created here: now functions/sms_guess_failed.sql.
