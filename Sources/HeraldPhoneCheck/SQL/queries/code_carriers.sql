-- name: CodeCarriers
-- Which of the verifications carry a code (their SMS was not refused).
-- param verificationIDs: text[]
-- column verificationID: text
SELECT verification_id FROM herald.sms_verifications WHERE verification_id = ANY($1::text[]) AND code_id IS NOT NULL;
