-- Deleting an account enqueues apple.revoke for each token it holds, in the deleting
-- transaction, whoever deletes it (HeraldAccounts.deleteAccount, a front API's SQL, a
-- notification): an outbox row for the jobs exchange, relayed like every job Herald
-- enqueues itself. The token stays until the revocation deletes it.
CREATE OR REPLACE FUNCTION herald.apple_revoke_deleted_accounts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    INSERT INTO herald.event_outbox (exchange, name, message_id, body)
    SELECT t.jobs_exchange, 'apple.revoke', gen_random_uuid()::text,
           json_build_object('version', 1, 'account_id', t.account_id, 'client_id', t.client_id)::text
      FROM deleted d JOIN herald.apple_tokens t ON t.account_id = d.id;
    RETURN NULL;
END
$function$;

CREATE OR REPLACE TRIGGER accounts_apple_revoke AFTER DELETE ON herald.accounts
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT
    EXECUTE FUNCTION herald.apple_revoke_deleted_accounts();
