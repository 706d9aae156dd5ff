-- name: EmailCodesOfRequest
-- The codes (links) an email request sent, in order, with their continue URL.
-- param requestID: text
-- column status: text
-- column keyID: text
-- column continueURL: text?
-- column expiresAt: text
-- column usedAt: text?
SELECT status, key_id, settings->>'url', to_char(expires_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'), to_char(used_at, 'YYYY-MM-DD"T"HH24:MI:SSOF')
  FROM herald.email_codes WHERE request_id = $1::text ORDER BY id;
