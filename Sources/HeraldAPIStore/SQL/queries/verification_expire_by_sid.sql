-- name: VerificationExpireBySid
-- The pending verification `sid` of the Service, if its time is up, is `expired` as of its expiry.
-- param serviceSid: text
-- param sid: text
UPDATE herald.verify_verifications SET status = 'expired', updated_at = expires_at
 WHERE service_sid = $1::text AND sid = $2::text AND status = 'pending' AND expires_at <= now();
