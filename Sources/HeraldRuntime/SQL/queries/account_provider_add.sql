-- name: AccountProviderAdd
-- The provider an account signed up with (in the transaction that created the account).
-- param accountID: text
-- param provider: text
-- param providerUID: text
INSERT INTO herald.account_providers (account_id, provider, provider_uid) VALUES ($1::text, $2::text, $3::text);
