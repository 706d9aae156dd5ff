-- Decides an email.code job atomically, as herald.sms_prepare decides an sms.verification one
-- (the same decisions, without test numbers):
--   send     the caller mails the code it hashed (p_code_hash); o_uncertain: an earlier try of
--            this verification may have reached a provider (its worker died mid-send)
--   reused   a code mailed less than p_resend_interval_seconds ago answers this verification too
--            (no second email unless p_force)
--   refused  o_reason: 'locked_out' (too many wrong codes for the address, any purpose), or a send
--            limit 'rate_limited:<scope>' (herald.email_rate_take, the email.limits.* counters the
--            links count in too); a refused request uses no quota
--   done     this verification was decided before (o_reason: its state)
--   closed   a retry whose code was used, killed or expired meanwhile: nothing to send
--   busy     a send of this verification, or of the pending code it would share, is under way
--   invalid  the verification id is another address's or purpose's (o_reason names the field)
-- The pending code is one per address, purpose and tenant (p_tenant: the job's `tenant`, ''
-- without one; email migration 8): shared, reused and checked only within its tenant.
--   invalid  also: the verification id is another tenant's
-- A new code (or a resend, which replaces the pending code's hash: the earlier email's code stops
-- working) starts with no tries used; the address's wrong codes still count toward its lock.
CREATE OR REPLACE FUNCTION herald.email_otp_prepare(p_verification_id text, p_message_id text, p_email text, p_purpose text, p_force boolean, p_key_id text, p_code_hash bytea, p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer, p_tenant text DEFAULT '')
 RETURNS TABLE(o_decision text, o_reason text, o_uncertain boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    ver herald.email_otp_verifications%ROWTYPE;
    cur herald.email_otp_codes%ROWTYPE;
    have_code boolean;
    code_row bigint;
    refused text;
    n_sent bigint;
    n_sending bigint;
    new_sends integer;
BEGIN
    SELECT * INTO ver FROM herald.email_otp_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    IF FOUND THEN
        -- The id names another address's or purpose's verification: never mailed to this one.
        IF ver.email <> p_email THEN
            RETURN QUERY SELECT 'invalid'::text, 'verification_id was used with another email'::text, false;
            RETURN;
        ELSIF ver.purpose <> p_purpose THEN
            RETURN QUERY SELECT 'invalid'::text, 'verification_id was used with another purpose'::text, false;
            RETURN;
        END IF;
        IF ver.state NOT IN ('sending', 'retrying') THEN
            RETURN QUERY SELECT 'done'::text, ver.state, false;
            RETURN;
        END IF;
        -- Another job of this verification is calling a provider right now.
        IF ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key) THEN
            RETURN QUERY SELECT 'busy'::text, NULL::text, false;
            RETURN;
        END IF;
        SELECT * INTO cur FROM herald.email_otp_codes WHERE id = ver.code_id FOR UPDATE;
        -- The id names another tenant's verification: its code is not this tenant's to mail.
        IF FOUND AND cur.tenant <> p_tenant THEN
            RETURN QUERY SELECT 'invalid'::text, 'verification_id was used with another tenant'::text, false;
            RETURN;
        END IF;
        IF NOT FOUND OR cur.status <> 'pending' OR cur.expires_at <= now() THEN
            UPDATE herald.email_otp_verifications SET state = 'failed', reason = 'code_closed', updated_at = now()
             WHERE verification_id = p_verification_id;
            RETURN QUERY SELECT 'closed'::text, 'code_closed'::text, false;
            RETURN;
        END IF;
        IF cur.sends IS DISTINCT FROM ver.code_sends THEN
            -- Another request mailed the code again since: that email answers this verification.
            UPDATE herald.email_otp_verifications SET state = 'reused', updated_at = now()
             WHERE verification_id = p_verification_id;
            RETURN QUERY SELECT 'reused'::text, NULL::text, false;
            RETURN;
        END IF;
        -- A retry, or a redelivery after a crash: a fresh code replaces the one nobody may have received.
        UPDATE herald.email_otp_codes
           SET key_id = p_key_id, code_hash = p_code_hash, attempts = 0,
               expires_at = now() + make_interval(secs => p_ttl_seconds), last_sent_at = now(), sends = sends + 1
         WHERE id = cur.id;
        UPDATE herald.email_otp_verifications
           SET state = 'sending', message_id = p_message_id, code_sends = cur.sends + 1, owner_key = p_owner_key, updated_at = now(),
               uncertain_sends = uncertain_sends + CASE WHEN ver.state = 'sending' THEN 1 ELSE 0 END
         WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'send'::text, NULL::text, ver.state = 'sending';
        RETURN;
    END IF;

    -- Guessing: the address is locked (herald.email_otp_guess_failed): no code is mailed until the lock ends.
    IF EXISTS (SELECT 1 FROM herald.email_otp_guess_failures WHERE email = p_email AND locked_until > now()) THEN
        INSERT INTO herald.email_otp_verifications (verification_id, code_id, email, purpose, message_id, state, reason)
        VALUES (p_verification_id, NULL, p_email, p_purpose, p_message_id, 'refused', 'locked_out');
        RETURN QUERY SELECT 'refused'::text, 'locked_out'::text, false;
        RETURN;
    END IF;

    SELECT * INTO cur FROM herald.email_otp_codes
     WHERE email = p_email AND purpose = p_purpose AND tenant = p_tenant AND status = 'pending' FOR UPDATE;
    have_code := FOUND;
    IF have_code AND cur.expires_at <= now() THEN
        UPDATE herald.email_otp_codes SET status = 'expired', finished_at = now() WHERE id = cur.id;
        have_code := false;
    END IF;

    IF have_code AND NOT p_force AND cur.last_sent_at > now() - make_interval(secs => p_resend_interval_seconds) THEN
        -- Reuse only a code that reached a provider; wait for one whose send is under way; a
        -- code whose send failed (every provider, for now) is mailed afresh below.
        SELECT count(*) FILTER (WHERE state = 'sent'),
               count(*) FILTER (WHERE state = 'sending' AND owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(owner_key))
          INTO n_sent, n_sending
          FROM herald.email_otp_verifications WHERE code_id = cur.id AND code_sends = cur.sends;
        IF n_sent > 0 THEN
            INSERT INTO herald.email_otp_verifications (verification_id, code_id, email, purpose, message_id, state, code_sends)
            VALUES (p_verification_id, cur.id, p_email, p_purpose, p_message_id, 'reused', cur.sends);
            RETURN QUERY SELECT 'reused'::text, NULL::text, false;
            RETURN;
        ELSIF n_sending > 0 THEN
            RETURN QUERY SELECT 'busy'::text, NULL::text, false;
            RETURN;
        END IF;
    END IF;

    -- Every send limit in one statement (sliding windows), shared with the links.
    refused := herald.email_rate_take(p_scopes, p_keys, p_windows, p_maxes, now());
    IF refused IS NOT NULL THEN
        INSERT INTO herald.email_otp_verifications (verification_id, code_id, email, purpose, message_id, state, reason)
        VALUES (p_verification_id, NULL, p_email, p_purpose, p_message_id, 'refused', 'rate_limited:' || refused);
        RETURN QUERY SELECT 'refused'::text, 'rate_limited:' || refused, false;
        RETURN;
    END IF;

    IF have_code THEN
        UPDATE herald.email_otp_codes
           SET key_id = p_key_id, code_hash = p_code_hash, max_attempts = p_max_attempts, attempts = 0,
               expires_at = now() + make_interval(secs => p_ttl_seconds), last_sent_at = now(), sends = sends + 1,
               guess_limit = p_guess_limit, guess_window_seconds = p_guess_window_seconds,
               lockout_seconds = p_lockout_seconds, lockout_max_seconds = p_lockout_max_seconds
         WHERE id = cur.id;
        code_row := cur.id;
        new_sends := cur.sends + 1;
    ELSE
        new_sends := 1;
        INSERT INTO herald.email_otp_codes (email, purpose, tenant, status, key_id, code_hash, max_attempts, expires_at, last_sent_at, sends,
                                            guess_limit, guess_window_seconds, lockout_seconds, lockout_max_seconds)
        VALUES (p_email, p_purpose, p_tenant, 'pending', p_key_id, p_code_hash, p_max_attempts,
                now() + make_interval(secs => p_ttl_seconds), now(), 1,
                p_guess_limit, p_guess_window_seconds, p_lockout_seconds, p_lockout_max_seconds)
        ON CONFLICT (email, purpose, tenant) WHERE status = 'pending' DO NOTHING
        RETURNING id INTO code_row;
        IF code_row IS NULL THEN
            RAISE EXCEPTION 'a concurrent request created the pending code; try again' USING ERRCODE = '40001';
        END IF;
    END IF;
    INSERT INTO herald.email_otp_verifications (verification_id, code_id, email, purpose, message_id, state, code_sends, owner_key)
    VALUES (p_verification_id, code_row, p_email, p_purpose, p_message_id, 'sending', new_sends, p_owner_key);
    RETURN QUERY SELECT 'send'::text, NULL::text, false;
END;
$function$;
