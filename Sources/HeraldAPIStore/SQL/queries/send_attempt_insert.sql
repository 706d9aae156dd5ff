-- name: SendAttemptInsert
-- Records a verification's send attempt number `attempt` (its sid is the Herald SMS job's).
-- param verificationSid: text
-- param attempt: integer
-- param attemptSid: text
-- param channel: text
INSERT INTO herald.verify_send_attempts (verification_sid, attempt, attempt_sid, channel)
VALUES ($1::text, $2::int, $3::text, $4::text);
