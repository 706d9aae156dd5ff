-- name: AppleAccountLock
-- The account linked to Apple's `sub` (`apple.com` in herald.account_providers), locked.
-- param appleSubject: text
-- column accountID: text
SELECT account_id FROM herald.account_providers WHERE provider = 'apple.com' AND provider_uid = $1::text FOR UPDATE;
