-- name: AccountProviderLink
-- Links a provider to an existing account (a provider linked before gets the new uid). The
-- foreign key locks the account row against a cleanup batch deleting it meanwhile; the trigger
-- clears `is_anonymous` and `delete_after` in this transaction. No row when the account does
-- not exist.
-- param accountID: text
-- param provider: text
-- param providerUID: text
-- column linked: integer
INSERT INTO herald.account_providers (account_id, provider, provider_uid)
SELECT id, $2::text, $3::text FROM herald.accounts WHERE id = $1::text
ON CONFLICT (account_id, provider) DO UPDATE SET provider_uid = EXCLUDED.provider_uid, linked_at = now()
RETURNING 1;
