-- name: FallbackUndelivered
-- An undelivered receipt: the verification's next channel at once, if it has one and the
-- receipt is its current send's (functions/sms_fallback_undelivered.sql).
-- param verificationID: text
-- param providerMessageID: text
-- param exchange: text
-- column scheduled: boolean
SELECT herald.sms_fallback_undelivered($1::text, $2::text, $3::text);
