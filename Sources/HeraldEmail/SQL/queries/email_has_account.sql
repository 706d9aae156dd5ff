-- name: EmailHasAccount
-- Whether an address (normal form) belongs to an enabled account with an email provider
-- (`password` or `emailLink` in herald.account_providers, `provider_uid` the address).
-- param email: text
-- column exists: boolean
SELECT EXISTS (SELECT 1 FROM herald.account_providers p JOIN herald.accounts a ON a.id = p.account_id
                WHERE p.provider IN ('password', 'emailLink') AND lower(p.provider_uid) = lower($1::text) AND NOT a.disabled);
