-- name: VerificationInsert
-- A new pending verification of the number in the Service, valid `ttlSeconds`; nothing when the
-- number already has a pending one there (a concurrent start waits here for the other's commit).
-- param sid: text
-- param serviceSid: text
-- param to: text
-- param channel: text
-- param locale: text?
-- param ttlSeconds: integer
INSERT INTO herald.verify_verifications (sid, service_sid, to_number, channel, locale, status, expires_at)
VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, 'pending', now() + make_interval(secs => $6::int))
ON CONFLICT (service_sid, to_number) WHERE status = 'pending' DO NOTHING;
