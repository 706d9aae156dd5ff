-- name: VerificationSent
-- A verification as its new send makes it: that send's channel, its locale unless none is given,
-- valid `ttlSeconds` from now.
-- param sid: text
-- param channel: text
-- param locale: text?
-- param ttlSeconds: integer
UPDATE herald.verify_verifications
   SET channel = $2::text, locale = coalesce($3::text, locale), updated_at = now(),
       expires_at = now() + make_interval(secs => $4::int)
 WHERE sid = $1::text;
