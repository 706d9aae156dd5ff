-- name: ReceiptSecretExpired
-- A receipt's secret confirmed after its expiry: `expired` from now on.
-- param receipt: text
UPDATE herald.push_verifications SET secret_status = 'expired', updated_at = now() WHERE receipt = $1::text;
