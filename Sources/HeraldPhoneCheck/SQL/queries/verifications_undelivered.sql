-- name: VerificationsUndelivered
-- Of the verifications, those herald-sms ended without sending (failed or refused).
-- param verificationIDs: text[]
-- column verificationID: text
SELECT verification_id FROM herald.sms_verifications WHERE verification_id = ANY($1::text[]) AND state IN ('failed', 'refused');
