-- name: AppleIdentityUnlink
-- consent-revoked: the account's Apple identity is unlinked (a row when a link went).
-- param accountID: text
-- param appleSubject: text
-- column unlinked: integer
DELETE FROM herald.account_providers WHERE account_id = $1::text AND provider = 'apple.com' AND provider_uid = $2::text
RETURNING 1;
