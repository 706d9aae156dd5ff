-- A job dead-lettered after runner.max_attempts: its receipt ends `failed` with the reason,
-- its secret void. A receipt without a row yet gets one, `failed`. False when there is
-- nothing of this job to end: the receipt was decided meanwhile, names another device,
-- or a live worker is pushing it now.
CREATE OR REPLACE FUNCTION herald.push_exhausted(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_reason text)
 RETURNS boolean
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    ver herald.push_verifications%ROWTYPE;
BEGIN
    SELECT * INTO ver FROM herald.push_verifications WHERE receipt = p_receipt FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO herald.push_verifications (receipt, message_id, platform, environment, app_id, token_hash, state, secret_status, expires_at, reason)
        VALUES (p_receipt, p_message_id, p_platform, p_environment, p_app_id, p_token_hash, 'failed', 'void', now(), p_reason);
        RETURN true;
    END IF;
    IF ver.token_hash <> p_token_hash OR ver.environment <> p_environment OR ver.app_id <> p_app_id
       OR ver.state NOT IN ('sending', 'retrying')
       OR (ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key)) THEN
        RETURN false;
    END IF;
    UPDATE herald.push_verifications SET state = 'failed', secret_status = 'void', secret_hash = NULL, reason = p_reason, updated_at = now()
     WHERE receipt = p_receipt;
    RETURN true;
END;
$function$;
