-- name: CodeVerified
-- The right code was given: it is used (functions/email_otp_verified.sql); false when it was no
-- longer pending.
-- param codeID: bigint
-- column verified: boolean
SELECT herald.email_otp_verified($1::bigint);
