-- name: VerificationExhausted
-- The job ran out of attempts (functions/sms_exhausted.sql): the verification `failed`, its
-- code closed; false when there was nothing of this job to end.
-- param verificationID: text
-- param messageID: text
-- param phone: text
-- param purpose: text
-- param reason: text
-- column ended: boolean
SELECT herald.sms_exhausted($1::text, $2::text, $3::text, $4::text, $5::text);
