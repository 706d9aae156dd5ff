-- name: SMSAttemptsRead
-- The provider calls recorded for one verification id, oldest first (what `heraldctl verify show-*` prints).
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
SELECT provider, result, http_status, error_code, provider_message_id, duration_ms, delivery_status, delivery_status_at, delivery_error_code
  FROM herald.sms_send_attempts WHERE verification_id = $1::text ORDER BY id;
