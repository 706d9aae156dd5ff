-- name: TokenFind
-- The refresh token stored for an account and client id, sealed.
-- param accountID: text
-- param clientID: text
-- column keyID: text
-- column nonce: bytea
-- column ciphertext: bytea
-- column tag: bytea
SELECT key_id, nonce, ciphertext, tag FROM herald.apple_tokens WHERE account_id = $1::text AND client_id = $2::text;
