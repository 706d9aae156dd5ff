-- name: ServiceInsert
-- A new Twilio Verify Service with its settings.
-- param sid: text
-- param friendlyName: text
-- param codeLength: integer
-- param ttlSeconds: integer
-- param maxSendAttempts: integer
-- param maxCheckAttempts: integer
-- param skipSMSToLandlines: boolean
-- param doNotShareWarning: boolean
INSERT INTO herald.verify_services (sid, friendly_name, code_length, ttl_seconds, max_send_attempts, max_check_attempts,
                                   skip_sms_to_landlines, do_not_share_warning)
VALUES ($1::text, $2::text, $3::int, $4::int, $5::int, $6::int, $7::boolean, $8::boolean);
