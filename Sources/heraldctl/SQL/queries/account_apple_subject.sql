-- name: AccountAppleSubject
-- The `provider_uid` of an account's `apple.com` identity (Apple's `sub`); no row when it has none.
-- param accountID: text
-- column sub: text
SELECT provider_uid FROM herald.account_providers WHERE account_id = $1::text AND provider = 'apple.com';
