-- name: ReceiptLock
-- A receipt's verification, locked while the secret the app confirms is judged.
-- param receipt: text
-- column state: text as PushVerificationState
-- column secretStatus: text as PushSecretStatus
-- column keyID: text?
-- column secretHash: bytea?
-- column expired: boolean
-- column appID: text
-- column platform: text
SELECT state, secret_status, key_id, secret_hash, expires_at <= now(), app_id, platform
  FROM herald.push_verifications WHERE receipt = $1::text FOR UPDATE;
