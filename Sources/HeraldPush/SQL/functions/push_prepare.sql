-- Legacy migrations 5 and 9 defined it in turn; their notes, oldest first.
-- Legacy migration 5:
-- Decides a push.verification job atomically (one round trip):
--   send     the caller pushes the secret it hashed; o_uncertain: an earlier try may have
--            reached the provider (a crash between its answer and our commit)
--   refused  o_reason: token_invalid (a dead token costs no push) or rate_limited:device
--   done     this receipt was decided before (o_reason: its state)
--   busy     a live worker is pushing this receipt right now: decide again later
--
-- Legacy migration 9:
-- As in migration 5, with one more decision:
--   invalid  the receipt is another device's, environment's or app's (o_reason names the field)
CREATE OR REPLACE FUNCTION herald.push_prepare(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_token_hint text, p_key_id text, p_secret_hash bytea, p_ttl_seconds integer, p_rate_max integer, p_rate_window_seconds integer, p_owner_key bigint)
 RETURNS TABLE(o_decision text, o_reason text, o_uncertain boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    ver herald.push_verifications%ROWTYPE;
    tok herald.device_tokens%ROWTYPE;
    is_new boolean;
    uncertain boolean := false;
    refusal text;
BEGIN
    SELECT * INTO ver FROM herald.push_verifications WHERE receipt = p_receipt FOR UPDATE;
    is_new := NOT FOUND;
    IF NOT is_new THEN
        -- The receipt names another device's (or app's) push: never pushed to this one.
        refusal := CASE
            WHEN ver.platform <> p_platform THEN 'platform'
            WHEN ver.token_hash <> p_token_hash THEN 'device_token'
            WHEN ver.environment <> p_environment THEN 'environment'
            WHEN ver.app_id <> p_app_id THEN 'app_id' END;
        IF refusal IS NOT NULL THEN
            RETURN QUERY SELECT 'invalid'::text, 'receipt reused with a different ' || refusal, false;
            RETURN;
        END IF;
        IF ver.state NOT IN ('sending', 'retrying') THEN
            RETURN QUERY SELECT 'done'::text, ver.state, false;
            RETURN;
        END IF;
        IF ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key) THEN
            RETURN QUERY SELECT 'busy'::text, NULL::text, false;
            RETURN;
        END IF;
        uncertain := ver.state = 'sending';
    END IF;

    INSERT INTO herald.device_tokens (token_hash, platform, token_hint, app_id, environment)
    VALUES (p_token_hash, p_platform, p_token_hint, p_app_id, p_environment)
    ON CONFLICT (token_hash) DO UPDATE SET updated_at = now();
    SELECT * INTO tok FROM herald.device_tokens WHERE token_hash = p_token_hash FOR UPDATE;

    -- A dead token costs no push. BadDeviceToken is the exception when this job names the
    -- other environment: a sandbox token sent to production (or the reverse) is the usual
    -- cause, so the token gets its push in the environment the job now names.
    IF tok.status = 'invalid' AND (tok.reason IS DISTINCT FROM 'bad_device_token' OR tok.environment = p_environment) THEN
        refusal := 'token_invalid';
    ELSIF is_new AND p_rate_max > 0 THEN
        IF tok.window_start IS NULL OR tok.window_start + make_interval(secs => p_rate_window_seconds) <= now() THEN
            tok.window_start := now();
            tok.window_count := 0;
        END IF;
        IF tok.window_count >= p_rate_max THEN
            refusal := 'rate_limited:device';
        ELSE
            UPDATE herald.device_tokens SET window_start = tok.window_start, window_count = tok.window_count + 1
             WHERE token_hash = p_token_hash;
        END IF;
    END IF;
    IF refusal IS NULL THEN
        UPDATE herald.device_tokens SET app_id = p_app_id, environment = p_environment WHERE token_hash = p_token_hash;
    END IF;

    IF refusal IS NOT NULL THEN
        INSERT INTO herald.push_verifications (receipt, message_id, platform, environment, app_id, token_hash, state, secret_status, expires_at, reason)
        VALUES (p_receipt, p_message_id, p_platform, p_environment, p_app_id, p_token_hash, 'refused', 'void',
                now() + make_interval(secs => p_ttl_seconds), refusal)
        ON CONFLICT (receipt) DO UPDATE SET state = 'refused', secret_status = 'void', key_id = NULL, secret_hash = NULL,
                reason = refusal, updated_at = now();
        RETURN QUERY SELECT 'refused'::text, refusal, false;
        RETURN;
    END IF;

    INSERT INTO herald.push_verifications (receipt, message_id, platform, environment, app_id, token_hash, state, secret_status,
                                           key_id, secret_hash, expires_at, owner_key, sends)
    VALUES (p_receipt, p_message_id, p_platform, p_environment, p_app_id, p_token_hash, 'sending', 'pending',
            p_key_id, p_secret_hash, now() + make_interval(secs => p_ttl_seconds), p_owner_key, 1)
    ON CONFLICT (receipt) DO UPDATE SET state = 'sending', secret_status = 'pending', key_id = p_key_id, secret_hash = p_secret_hash,
            expires_at = now() + make_interval(secs => p_ttl_seconds), owner_key = p_owner_key,
            sends = herald.push_verifications.sends + 1,
            uncertain_sends = herald.push_verifications.uncertain_sends + CASE WHEN uncertain THEN 1 ELSE 0 END,
            reason = NULL, updated_at = now();
    RETURN QUERY SELECT 'send'::text, NULL::text, uncertain;
END
$function$;
