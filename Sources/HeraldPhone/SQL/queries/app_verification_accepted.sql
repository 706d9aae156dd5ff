-- name: AppVerificationAccepted
-- Evidence was accepted for this verification and number (its first job's, for a later send).
-- param verificationID: text
-- param phoneNumber: text
-- column accepted: integer
SELECT 1 FROM herald.sms_app_verifications WHERE verification_id = $1::text AND phone_number = $2::text;
