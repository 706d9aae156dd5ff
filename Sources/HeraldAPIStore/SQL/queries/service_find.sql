-- name: ServiceFind
-- One Service by its sid; no row when there is none.
-- param sid: text
-- column sid: text
-- column friendlyName: text
-- column codeLength: integer
-- column ttlSeconds: integer
-- column maxSendAttempts: integer
-- column maxCheckAttempts: integer
-- column skipSMSToLandlines: boolean
-- column doNotShareWarning: boolean
-- column createdAt: timestamp with time zone
-- column updatedAt: timestamp with time zone
SELECT sid, friendly_name, code_length, ttl_seconds, max_send_attempts, max_check_attempts, skip_sms_to_landlines,
       do_not_share_warning, created_at, updated_at
  FROM herald.verify_services WHERE sid = $1::text;
