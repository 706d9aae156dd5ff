-- name: SendAttemptWithdraw
-- Deletes a send attempt its worker refused; the verification it belonged to.
-- param attemptSid: text
-- column verificationSid: text
DELETE FROM herald.verify_send_attempts WHERE attempt_sid = $1::text RETURNING verification_sid;
