-- name: VerificationStartExpire
-- Before a start: the pending verification of the number in the Service, if its time is up, is
-- `expired` from now on (so the start makes a new one).
-- param serviceSid: text
-- param to: text
UPDATE herald.verify_verifications SET status = 'expired', updated_at = now()
 WHERE service_sid = $1::text AND to_number = $2::text AND status = 'pending' AND expires_at <= now();
