-- name: AppleNotificationsOfAccount
-- Apple's server-to-server notifications acted on for an account, in the order received.
-- param accountID: text
-- column jti: text
-- column type: text
-- column outcome: text
-- column clientID: text
-- column eventTime: text
-- column receivedAt: text
SELECT jti, type, outcome, client_id, to_char(event_time, 'YYYY-MM-DD"T"HH24:MI:SSOF'), to_char(received_at, 'YYYY-MM-DD"T"HH24:MI:SSOF')
  FROM herald.apple_notifications WHERE account_id = $1::text ORDER BY received_at;
