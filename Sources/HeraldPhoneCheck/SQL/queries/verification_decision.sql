-- name: VerificationDecision
-- What was decided for a verification, as its record says, with its number and purpose.
-- param verificationID: text
-- column state: text
-- column reason: text?
-- column channel: text
-- column phoneNumber: text
-- column purpose: text
SELECT state, reason, coalesce(channel, 'sms'), phone_number, purpose FROM herald.sms_verifications WHERE verification_id = $1::text;
