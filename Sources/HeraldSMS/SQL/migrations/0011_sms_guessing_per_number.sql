-- Wrong codes count per phone number, across purposes (issue 34). Counted per number and
-- purpose, a number locked for sign_in was still sent mfa_sign_in and mfa_enroll codes, and a
-- test number's fixed code could be guessed sms.guessing.max_failures times in each of the three
-- purposes per lock. NIST SP 800-63B limits consecutive failed attempts per subscriber: here the
-- number is the subscriber. The functions that read and write the count (functions/
-- sms_guess_failed.sql, sms_prepare.sql, sms_prepare_batch.sql) and PhoneVerifier key it by the
-- number alone from this version on.
--
-- A number's rows of several purposes become one: the failures added up, the most locks, the
-- latest failure, lock and expiry. Nothing is lost that a lock depends on.

-- squawk-ignore-file ban-drop-column, constraint-missing-not-valid, adding-serial-primary-key-field
-- why: ban-drop-column: only Herald's own code reads herald.sms_guess_failures, and this
--   version's code no longer reads purpose (the functions are replaced in the same migrate run).
-- why: constraint-missing-not-valid, adding-serial-primary-key-field: the table holds only the
--   numbers with a wrong code in the last sms.guessing.window_seconds (purged daily), a few
--   rows; the primary key's index is built under the ACCESS EXCLUSIVE lock the DROP COLUMN
--   already holds, within the lock and statement timeouts below.

SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '60s';

WITH merged AS (
    DELETE FROM herald.sms_guess_failures RETURNING *
)
INSERT INTO herald.sms_guess_failures (phone_number, purpose, failures, lockouts, last_failure_at, locked_until, expires_at)
SELECT phone_number, '', sum(failures)::integer, max(lockouts), max(last_failure_at), max(locked_until), max(expires_at)
  FROM merged GROUP BY phone_number;

ALTER TABLE herald.sms_guess_failures DROP COLUMN purpose;

ALTER TABLE herald.sms_guess_failures ADD PRIMARY KEY (phone_number);
