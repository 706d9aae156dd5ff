-- Wrong codes count per phone number, across purposes (issue 34). Counted per number and
-- purpose, a number locked for sign_in was still sent mfa_sign_in and mfa_enroll codes, and a
-- test number's fixed code could be guessed sms.guessing.max_failures times in each of the three
-- purposes per lock. NIST SP 800-63B limits consecutive failed attempts per subscriber: here the
-- number is the subscriber. The functions that read and write the count (functions/
-- sms_guess_failed.sql, sms_prepare.sql, sms_prepare_batch.sql) and PhoneVerifier key it by the
-- number alone from this version on.
--
-- A number's rows of several purposes become one: the failures of rows still in their window
-- added up (a row past expires_at would have started again at its next failure), the most
-- locks of those, the latest failure, lock and expiry.
--
-- `purpose` stays, unused (''), for one release: a checker of the previous version (an old
-- herald-api, or a front API linking the old HeraldVerification) still filters on it during a
-- rolling upgrade; it then finds no row (no lock seen) instead of failing on a missing column.
-- A later migration drops it.

-- squawk-ignore-file ban-drop-constraint, constraint-missing-not-valid, adding-serial-primary-key-field
-- why: ban-drop-constraint: the old primary key (phone_number, purpose), replaced two statements
--   later by (phone_number): a checker of the previous version only reads the table by number and
--   purpose, which the new key serves too (its purpose is '': no row, no lock seen).
-- why: constraint-missing-not-valid, adding-serial-primary-key-field: the table holds only the
--   numbers with a wrong code in the last sms.guessing.window_seconds (purged daily), a few
--   rows; the new primary key's index is built under the ACCESS EXCLUSIVE lock the DROP
--   CONSTRAINT already holds, within the lock and statement timeouts below.

SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '60s';

WITH merged AS (
    DELETE FROM herald.sms_guess_failures RETURNING *
)
INSERT INTO herald.sms_guess_failures (phone_number, purpose, failures, lockouts, last_failure_at, locked_until, expires_at)
SELECT phone_number, '',
       coalesce(sum(failures) FILTER (WHERE expires_at > now()), 0)::integer,
       coalesce(max(lockouts) FILTER (WHERE expires_at > now()), 0),
       max(last_failure_at), max(locked_until), max(expires_at)
  FROM merged GROUP BY phone_number;

ALTER TABLE herald.sms_guess_failures DROP CONSTRAINT sms_guess_failures_pkey;
ALTER TABLE herald.sms_guess_failures ALTER COLUMN purpose SET DEFAULT '';
ALTER TABLE herald.sms_guess_failures ADD PRIMARY KEY (phone_number);
