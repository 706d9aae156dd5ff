-- name: VerificationFinish
-- Moves a pending verification of the Service to `status`; no row when none was pending.
-- param status: text as VerifyVerification.Status
-- param serviceSid: text
-- param sid: text
-- column sid: text
UPDATE herald.verify_verifications SET status = $1::text, updated_at = now()
 WHERE service_sid = $2::text AND sid = $3::text AND status = 'pending' RETURNING sid;
