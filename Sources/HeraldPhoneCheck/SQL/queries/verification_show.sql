-- name: VerificationShow
-- One verification as `heraldctl verify show-sms` and herald-api print it: its state, its
-- code's status and tries, its fallback. Times are RFC 3339 in UTC, whole seconds.
-- param verificationID: text
-- column state: text
-- column reason: text?
-- column phoneNumber: text
-- column purpose: text
-- column provider: text?
-- column providerMessageID: text?
-- column uncertainSends: integer
-- column codeStatus: text?
-- column attempts: integer?
-- column maxAttempts: integer?
-- column expiresAt: text?
-- column createdAt: text
-- column channel: text
-- column fallbackChannels: text[]?
-- column fallbackStep: integer?
-- column fallbackNextAt: text?
-- column tenant: text?
SELECT v.state, v.reason, v.phone_number, v.purpose, v.provider, v.provider_message_id, v.uncertain_sends,
       c.status, c.attempts, c.max_attempts, to_char(c.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), coalesce(v.channel, 'sms'), f.channels, f.step,
       to_char(f.due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), nullif(c.tenant, '')
  FROM herald.sms_verifications v LEFT JOIN herald.sms_codes c ON c.id = v.code_id
       LEFT JOIN herald.sms_fallbacks f ON f.verification_id = v.verification_id
 WHERE v.verification_id = $1::text;
