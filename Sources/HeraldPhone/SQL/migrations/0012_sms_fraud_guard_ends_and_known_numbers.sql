-- The fraud guard safe by default (issue 34). An independent test found a pause could be turned
-- against users: 30 unverified requests paused a 7-digit prefix for everyone until an operator
-- lifted it (no end of its own), and after a lift the prefix was unguarded for an hour (100 of
-- 100 further unverified requests sent). From this version (functions/fraud_guard_check.sql):
--   - a pause ends by itself after sms.fraud_guard.pause_seconds, doubled on each repeat within a
--     day, up to max_pause_seconds;
--   - after a pause ends (lifted or run out), its scope keeps a budget for lift_grace_seconds:
--     the requests let through (grace_sent) and the codes of them verified (grace_verified) are
--     counted on the pause's row, and past the floor with a conversion under the minimum the scope
--     is paused again;
--   - numbers that verified a code before (herald.sms_known_numbers: an HMAC of the number under
--     the key ring's active key, never the number) are never refused by the guard, so a burst
--     cannot lock out existing users.

-- squawk-ignore-file ban-drop-function, prefer-bigint-over-int
-- why: ban-drop-function: herald.fraud_guard_check's previous signature, whose only callers are
--   Herald's own SMS workers; this version's workers call the new one. A worker of the previous
--   version still running during a rolling upgrade gets an error on its next fraud check, and
--   the job is retried (by a new worker).
-- why: prefer-bigint-over-int: grace_sent and grace_verified count the requests of one grace
--   period of one scope (at most a few floors' worth).

SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '60s';

ALTER TABLE herald.sms_fraud_pauses
    ADD COLUMN grace_sent integer NOT NULL DEFAULT 0,
    ADD COLUMN grace_verified integer NOT NULL DEFAULT 0;

-- Numbers that verified a code: an HMAC-SHA256 of the E.164 number (hex) under the key ring's
-- active key when it verified (key_id), never the number. Purged after
-- cleanup.purge.sms_known_numbers_days without a verification.
CREATE TABLE herald.sms_known_numbers (
    number_hash  text PRIMARY KEY,
    key_id       text NOT NULL,
    verified_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_known_numbers_verified_idx ON herald.sms_known_numbers (verified_at);

DROP FUNCTION IF EXISTS herald.fraud_guard_check(text, text, text, text, integer, integer, integer, double precision, integer);
