-- name: NotificationClaim
-- Records a server-to-server notification by its `jti`: a row when it is the first time the
-- `jti` is seen, none when it was recorded before.
-- param jti: text
-- param messageID: text
-- param clientID: text
-- param type: text
-- param issuedAt: timestamp with time zone
-- param eventTime: timestamp with time zone
-- column inserted: integer
INSERT INTO herald.apple_notifications (jti, message_id, client_id, type, issued_at, event_time)
VALUES ($1::text, $2::text, $3::text, $4::text, $5::timestamptz, $6::timestamptz)
ON CONFLICT (jti) DO NOTHING RETURNING 1;
