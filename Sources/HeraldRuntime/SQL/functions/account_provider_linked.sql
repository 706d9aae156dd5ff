-- Linking a provider upgrades the account, whichever client inserted the link. Updating
-- the account row also makes a cleanup batch that locks it later re-check is_anonymous.
-- Since legacy migration 11 it also clears delete_after: a linked account holds no deletion date.
CREATE OR REPLACE FUNCTION herald.account_provider_linked()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$ BEGIN UPDATE herald.accounts SET is_anonymous = false, upgraded_at = coalesce(upgraded_at, now()), delete_after = NULL WHERE id = NEW.account_id AND is_anonymous; RETURN NEW; END $function$;

CREATE OR REPLACE TRIGGER account_providers_upgrade AFTER INSERT ON herald.account_providers
    FOR EACH ROW
    EXECUTE FUNCTION herald.account_provider_linked();
