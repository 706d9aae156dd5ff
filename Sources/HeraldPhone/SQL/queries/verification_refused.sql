-- name: VerificationRefused
-- A verification refused before anything was decided in the database (its number's region or
-- type, app verification, the fraud guard): recorded `refused`; one already there is left.
-- param verificationID: text
-- param phoneNumber: text
-- param purpose: text
-- param messageID: text
-- param reason: text
INSERT INTO herald.sms_verifications (verification_id, phone_number, purpose, message_id, state, reason)
VALUES ($1::text, $2::text, $3::text, $4::text, 'refused', $5::text)
ON CONFLICT (verification_id) DO NOTHING;
