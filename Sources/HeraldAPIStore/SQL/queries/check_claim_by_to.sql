-- name: CheckClaimByTo
-- Counts one check against the pending verification of number `to` in the Service, locked,
-- unless it has had `maxChecks`: then it is `max_attempts_reached`. `counted`: the check was counted.
-- param serviceSid: text
-- param to: text
-- param maxChecks: integer
-- column sid: text
-- column counted: boolean
WITH open AS (
    SELECT sid, checks FROM herald.verify_verifications WHERE service_sid = $1::text AND to_number = $2::text AND status = 'pending' FOR UPDATE)
UPDATE herald.verify_verifications v
   SET checks = CASE WHEN open.checks < $3::int THEN open.checks + 1 ELSE open.checks END,
       status = CASE WHEN open.checks < $3::int THEN 'pending' ELSE 'max_attempts_reached' END, updated_at = now()
  FROM open WHERE v.sid = open.sid
RETURNING v.sid, open.checks < $3::int;
