-- name: CodeVoid
-- Voids the pending code a verification carried (functions/email_otp_void.sql): a Twilio Verify
-- verification canceled or approved by its update.
-- param verificationID: text
-- column voided: boolean
SELECT herald.email_otp_void($1::text);
