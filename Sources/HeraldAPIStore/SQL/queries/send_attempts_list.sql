-- name: SendAttemptsList
-- A verification's send attempts, first to last (the last one carries the code to check).
-- param verificationSid: text
-- column attemptSid: text
-- column channel: text
-- column createdAt: timestamp with time zone
SELECT attempt_sid, channel, created_at FROM herald.verify_send_attempts WHERE verification_sid = $1::text ORDER BY attempt;
