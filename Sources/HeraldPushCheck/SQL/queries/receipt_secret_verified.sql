-- name: ReceiptSecretVerified
-- A receipt's secret confirmed by the app: `verified`, once.
-- param receipt: text
UPDATE herald.push_verifications SET secret_status = 'verified', verified_at = now(), updated_at = now() WHERE receipt = $1::text;
