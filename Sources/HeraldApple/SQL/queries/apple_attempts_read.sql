-- name: AppleAttemptsRead
-- The provider calls recorded for one message id, oldest first (what `heraldctl verify show-*` prints).
-- param key: text
-- column provider: text
-- column result: text as DeliveryAttempt.Result
-- column httpStatus: integer?
-- column errorCode: text?
-- column providerMessageID: text?
-- column durationMilliseconds: integer
-- column deliveryStatus: text? as DeliveryStatus
-- column deliveryStatusAt: timestamp with time zone?
-- column deliveryErrorCode: text?
SELECT provider, result, http_status, error_code, provider_message_id, duration_ms, NULL::text, NULL::timestamptz, NULL::text
  FROM herald.apple_attempts WHERE message_id = $1::text ORDER BY id;
