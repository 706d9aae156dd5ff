-- name: KnownNumberVerified
-- Records that a number (its keyed hash, hex) verified a code: the fraud guard never refuses it.
-- param numberHash: text
-- param keyID: text
INSERT INTO herald.sms_known_numbers (number_hash, key_id, verified_at) VALUES ($1::text, $2::text, now())
ON CONFLICT (number_hash) DO UPDATE SET key_id = EXCLUDED.key_id, verified_at = now();
