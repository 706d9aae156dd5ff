-- name: NotificationFinish
-- Records what a notification did (`outcome`) and the account it concerned, if any.
-- param outcome: text
-- param accountID: text?
-- param jti: text
UPDATE herald.apple_notifications SET outcome = $1::text, account_id = $2::text WHERE jti = $3::text;
