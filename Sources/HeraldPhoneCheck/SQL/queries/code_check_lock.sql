-- name: CodeCheckLock
-- The code a verification carries, locked for its check (checks of one code run one after
-- another); `expired`: its time is up (now() of this transaction).
-- param verificationID: text
-- column id: bigint
-- column status: text as SMSCodeStatus
-- column keyID: text
-- column digest: bytea
-- column expired: boolean
-- column phoneNumber: text
-- column purpose: text
-- column tenant: text
SELECT c.id, c.status, c.key_id, c.code_hash, c.expires_at <= now(), c.phone_number, c.purpose, c.tenant
  FROM herald.sms_verifications v JOIN herald.sms_codes c ON c.id = v.code_id
 WHERE v.verification_id = $1::text
   FOR UPDATE OF c;
