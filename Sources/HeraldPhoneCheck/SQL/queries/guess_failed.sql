-- name: GuessFailed
-- A wrong code (functions/sms_guess_failed.sql): the tries left, and the seconds of the lockout
-- it started (none: not locked out).
-- param codeID: bigint
-- column attemptsLeft: integer
-- column lockSeconds: integer?
SELECT o_attempts_left, ceil(extract(epoch FROM o_locked_until - now()))::int FROM herald.sms_guess_failed($1::bigint);
