-- name: VerificationExpireByTo
-- The pending verification of number `to` in the Service, if its time is up, is `expired` as of
-- its expiry.
-- param serviceSid: text
-- param to: text
UPDATE herald.verify_verifications SET status = 'expired', updated_at = expires_at
 WHERE service_sid = $1::text AND to_number = $2::text AND status = 'pending' AND expires_at <= now();
