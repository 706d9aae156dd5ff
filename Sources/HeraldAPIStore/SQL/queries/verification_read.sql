-- name: VerificationRead
-- One verification of the Service (its send attempts are SendAttemptsList's).
-- param serviceSid: text
-- param sid: text
-- column sid: text
-- column serviceSid: text
-- column to: text
-- column channel: text
-- column locale: text?
-- column status: text as VerifyVerification.Status
-- column checks: integer
-- column createdAt: timestamp with time zone
-- column updatedAt: timestamp with time zone
-- column expiresAt: timestamp with time zone
SELECT sid, service_sid, to_number, channel, locale, status, checks, created_at, updated_at, expires_at
  FROM herald.verify_verifications WHERE service_sid = $1::text AND sid = $2::text;
