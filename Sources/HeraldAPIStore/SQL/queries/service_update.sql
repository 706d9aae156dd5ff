-- name: ServiceUpdate
-- Writes every setting over a Service's; no row when there is no such Service.
-- param sid: text
-- param friendlyName: text
-- param codeLength: integer
-- param ttlSeconds: integer
-- param maxSendAttempts: integer
-- param maxCheckAttempts: integer
-- param skipSMSToLandlines: boolean
-- param doNotShareWarning: boolean
-- column sid: text
UPDATE herald.verify_services
   SET friendly_name = $2::text, code_length = $3::int, ttl_seconds = $4::int, max_send_attempts = $5::int,
       max_check_attempts = $6::int, skip_sms_to_landlines = $7::boolean, do_not_share_warning = $8::boolean, updated_at = now()
 WHERE sid = $1::text
RETURNING sid;
