-- name: CheckSpentByTo
-- The latest verification of number `to` in the Service that has had all of its checks and would
-- still be valid.
-- param serviceSid: text
-- param to: text
-- column sid: text
SELECT sid FROM herald.verify_verifications
 WHERE service_sid = $1::text AND to_number = $2::text AND status = 'max_attempts_reached' AND expires_at > now()
 ORDER BY updated_at DESC LIMIT 1;
