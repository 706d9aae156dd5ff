-- name: GuessLockout
-- The seconds a number stays locked out for wrong codes (none: not locked out).
-- param phoneNumber: text
-- column seconds: integer
SELECT ceil(extract(epoch FROM locked_until - now()))::int FROM herald.sms_guess_failures
 WHERE phone_number = $1::text AND locked_until > now();
