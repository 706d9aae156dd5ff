-- name: VerificationRewind
-- A pending verification's channel and validity (`ttlSeconds`) again those of its last send
-- that stands, after one was withdrawn.
-- param sid: text
-- param ttlSeconds: integer
UPDATE herald.verify_verifications v
   SET channel = last.channel, expires_at = last.created_at + make_interval(secs => $2::int), updated_at = now()
  FROM (SELECT channel, created_at FROM herald.verify_send_attempts WHERE verification_sid = $1::text
         ORDER BY attempt DESC LIMIT 1) last
 WHERE v.sid = $1::text AND v.status = 'pending';
