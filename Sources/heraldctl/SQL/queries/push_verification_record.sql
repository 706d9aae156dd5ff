-- name: PushVerificationRecord
-- A push verification as `heraldctl verify push` shows it, with its device token's hint and
-- status (NULL when the token row is gone).
-- param receipt: text
-- column state: text
-- column secretStatus: text
-- column platform: text
-- column environment: text
-- column appID: text
-- column provider: text?
-- column providerMessageID: text?
-- column httpStatus: integer?
-- column reason: text?
-- column sends: integer
-- column uncertainSends: integer
-- column expiresAt: text
-- column createdAt: text
-- column tokenHint: text?
-- column tokenStatus: text?
-- column tokenReason: text?
SELECT v.state, v.secret_status, v.platform, v.environment, v.app_id, v.provider, v.provider_message_id, v.http_status,
       v.reason, v.sends, v.uncertain_sends, to_char(v.expires_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'),
       to_char(v.created_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'), t.token_hint, t.status, t.reason
  FROM herald.push_verifications v LEFT JOIN herald.device_tokens t ON t.token_hash = v.token_hash
 WHERE v.receipt = $1::text;
