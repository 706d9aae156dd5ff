-- name: VerificationPendingLock
-- The pending verification of the number in the Service, locked, with how many sends it has had.
-- param serviceSid: text
-- param to: text
-- column sid: text
-- column sends: integer
SELECT v.sid, (SELECT count(*)::int FROM herald.verify_send_attempts a WHERE a.verification_sid = v.sid)
  FROM herald.verify_verifications v
 WHERE v.service_sid = $1::text AND v.to_number = $2::text AND v.status = 'pending'
   FOR UPDATE OF v;
