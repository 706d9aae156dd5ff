-- name: AppVerificationRecord
-- The app verification a request's evidence passed (a push receipt or a captcha); the first stays.
-- param verificationID: text
-- param phoneNumber: text
-- param method: text
-- param detail: text
-- param score: double precision?
-- param hostname: text?
INSERT INTO herald.sms_app_verifications (verification_id, phone_number, method, detail, score, hostname)
VALUES ($1::text, $2::text, $3::text, $4::text, $5::float8, $6::text)
ON CONFLICT (verification_id) DO NOTHING;
