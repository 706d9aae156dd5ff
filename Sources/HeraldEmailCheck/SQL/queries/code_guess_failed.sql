-- name: CodeGuessFailed
-- A wrong code was given (functions/email_otp_guess_failed.sql): the tries it has left, and the
-- seconds the address is locked out for when this try locked it.
-- param codeID: bigint
-- column attemptsLeft: integer
-- column lockedSeconds: integer?
SELECT o_attempts_left, ceil(extract(epoch FROM o_locked_until - now()))::int FROM herald.email_otp_guess_failed($1::bigint);
