-- name: NotificationClaimant
-- The job that recorded a notification's `jti` first.
-- param jti: text
-- column messageID: text
SELECT message_id FROM herald.apple_notifications WHERE jti = $1::text;
