-- name: FallbackContinue
-- May the verification's next channel go out at once, in the job that holds its send, after the
-- channel it sent on refused the code or was down (functions/sms_fallback_continue.sql says how).
-- param verificationID: text
-- param messageID: text
-- param paused: text?
-- param maxPaidSends: integer
-- column decision: text
-- column reason: text?
SELECT o_decision, o_reason FROM herald.sms_fallback_continue($1::text, $2::text, $3::text, $4::int);
