-- Legacy migrations 2, 8 and 14 defined it in turn; their notes, oldest first.
-- Legacy migration 2:
-- Decides an sms.verification job atomically (one round trip):
--   send     the caller sends the code it hashed (p_code_hash); o_uncertain: an earlier try of
--            this verification may have reached a provider (a crash between its answer and our commit)
--   reused   a code sent less than p_resend_interval_seconds ago answers this verification too
--   test     a test number: the fixed code is stored, nothing is sent
--   refused  a rate limit (o_reason); refused requests use no quota
--   done     this verification was decided before (o_reason: its state)
--   closed   a retry whose code was used, killed or expired meanwhile: nothing to send
--   busy     a send of this verification, or of the pending code it would share, is under
--            way (`sending` by a worker whose presence lock is held): decide again later
--
-- Legacy migration 8:
-- As in migration 2, with one more decision:
--   invalid  the verification id is another number's or purpose's (o_reason names the field)
--
-- Legacy migration 14:
-- As in migration 8, with the guessing policy stored on the code, and two changes:
--   refused  also 'locked_out': the number is locked for guessing (any purpose's wrong codes)
--   limits   counted by herald.sms_rate_take (sliding windows, one statement for all)
-- A test number's pending code keeps its wrong tries when it is requested again.
--
-- Migration 16 (sms): the pending code is one per number, purpose and tenant (p_tenant: the job's
-- `tenant`, '' without one): a code is shared, reused and checked only within its tenant (a Twilio
-- Verify service); the limits, the guessing lock and the fraud guard still count per number.
--   invalid  also: the verification id is another tenant's
--
-- Migration 17 (sms, issue 46): p_max_paid_sends (sms.fallback.max_paid_sends; NULL, a previous
-- version's call: no budget). A pending code that a provider may have charged for that many
-- times (herald.sms_paid_sends: its sends, resends and fallbacks) is not sent again by a new
-- request, forced or not: refused, `rate_limited:paid_sends`, until it is used or expires.
CREATE OR REPLACE FUNCTION herald.sms_prepare(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_force boolean, p_test boolean, p_key_id text, p_code_hash bytea, p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer, p_tenant text DEFAULT '', p_max_paid_sends integer DEFAULT NULL)
 RETURNS TABLE(o_decision text, o_reason text, o_uncertain boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    ver herald.sms_verifications%ROWTYPE;
    cur herald.sms_codes%ROWTYPE;
    have_code boolean;
    code_row bigint;
    refused text;
    n_sent bigint;
    n_sending bigint;
    new_sends integer;
BEGIN
    SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    IF FOUND THEN
        -- The id names another number's or purpose's verification: never sent to this one.
        IF ver.phone_number <> p_phone THEN
            RETURN QUERY SELECT 'invalid'::text, 'verification_id reused with a different phone_number'::text, false;
            RETURN;
        ELSIF ver.purpose <> p_purpose THEN
            RETURN QUERY SELECT 'invalid'::text, 'verification_id reused with a different purpose'::text, false;
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
        SELECT * INTO cur FROM herald.sms_codes WHERE id = ver.code_id FOR UPDATE;
        -- The id names another tenant's verification: its code is not this tenant's to send.
        IF FOUND AND cur.tenant <> p_tenant THEN
            RETURN QUERY SELECT 'invalid'::text, 'verification_id reused with a different tenant'::text, false;
            RETURN;
        END IF;
        IF NOT FOUND OR cur.status <> 'pending' THEN
            UPDATE herald.sms_verifications SET state = 'failed', reason = 'code_closed', updated_at = now()
             WHERE verification_id = p_verification_id;
            RETURN QUERY SELECT 'closed'::text, 'code_closed'::text, false;
            RETURN;
        END IF;
        IF cur.sends IS DISTINCT FROM ver.code_sends THEN
            -- Another request sent the code again since: that SMS answers this verification.
            UPDATE herald.sms_verifications SET state = 'reused', updated_at = now()
             WHERE verification_id = p_verification_id;
            RETURN QUERY SELECT 'reused'::text, NULL::text, false;
            RETURN;
        END IF;
        -- A retry, or a redelivery after a crash: a fresh code replaces the one nobody may have received.
        UPDATE herald.sms_codes
           SET key_id = p_key_id, code_hash = p_code_hash, attempts = 0,
               expires_at = now() + make_interval(secs => p_ttl_seconds), last_sent_at = now(), sends = sends + 1
         WHERE id = cur.id;
        UPDATE herald.sms_verifications
           SET state = 'sending', message_id = p_message_id, code_sends = cur.sends + 1, owner_key = p_owner_key, updated_at = now(),
               uncertain_sends = uncertain_sends + CASE WHEN ver.state = 'sending' THEN 1 ELSE 0 END
         WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'send'::text, NULL::text, ver.state = 'sending';
        RETURN;
    END IF;

    -- Guessing: too many wrong codes for this number, whatever their purposes
    -- (herald.sms_guess_failed), lock it; no code is sent (test numbers included) until the lock ends.
    IF EXISTS (SELECT 1 FROM herald.sms_guess_failures
                WHERE phone_number = p_phone AND locked_until > now()) THEN
        INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, reason)
        VALUES (p_verification_id, NULL, p_phone, p_purpose, p_message_id, 'refused', 'locked_out');
        RETURN QUERY SELECT 'refused'::text, 'locked_out'::text, false;
        RETURN;
    END IF;

    SELECT * INTO cur FROM herald.sms_codes
     WHERE phone_number = p_phone AND purpose = p_purpose AND tenant = p_tenant AND status = 'pending' FOR UPDATE;
    have_code := FOUND;
    IF have_code AND cur.expires_at <= now() THEN
        UPDATE herald.sms_codes SET status = 'expired', finished_at = now() WHERE id = cur.id;
        have_code := false;
    END IF;

    IF NOT p_test AND have_code AND NOT p_force AND NOT cur.test_number
       AND cur.last_sent_at > now() - make_interval(secs => p_resend_interval_seconds) THEN
        -- Reuse only a code that reached a provider; wait for one whose send is under way;
        -- a code whose send failed (every provider, for now) is sent afresh below.
        SELECT count(*) FILTER (WHERE state = 'sent'),
               count(*) FILTER (WHERE state = 'sending' AND owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(owner_key))
          INTO n_sent, n_sending
          FROM herald.sms_verifications WHERE code_id = cur.id AND code_sends = cur.sends;
        IF n_sent > 0 THEN
            INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends)
            VALUES (p_verification_id, cur.id, p_phone, p_purpose, p_message_id, 'reused', cur.sends);
            RETURN QUERY SELECT 'reused'::text, NULL::text, false;
            RETURN;
        ELSIF n_sending > 0 THEN
            RETURN QUERY SELECT 'busy'::text, NULL::text, false;
            RETURN;
        END IF;
    END IF;

    IF NOT p_test AND have_code AND NOT cur.test_number AND p_max_paid_sends IS NOT NULL
       AND herald.sms_paid_sends(cur.id) >= p_max_paid_sends THEN
        INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, reason)
        VALUES (p_verification_id, NULL, p_phone, p_purpose, p_message_id, 'refused', 'rate_limited:paid_sends');
        RETURN QUERY SELECT 'refused'::text, 'rate_limited:paid_sends'::text, false;
        RETURN;
    END IF;

    IF NOT p_test THEN
        -- force_resend's own limit counts only a resend of a pending code.
        IF 'resend' = ANY (p_scopes) AND NOT (have_code AND p_force) THEN
            SELECT coalesce(array_agg(u.s ORDER BY u.i), '{}'), coalesce(array_agg(u.k ORDER BY u.i), '{}'),
                   coalesce(array_agg(u.w ORDER BY u.i), '{}'), coalesce(array_agg(u.m ORDER BY u.i), '{}')
              INTO p_scopes, p_keys, p_windows, p_maxes
              FROM unnest(p_scopes, p_keys, p_windows, p_maxes) WITH ORDINALITY AS u(s, k, w, m, i)
             WHERE u.s <> 'resend';
        END IF;
        -- Every limit in one statement, sliding windows; a refused request uses no quota.
        refused := herald.sms_rate_take(p_scopes, p_keys, p_windows, p_maxes, now());
        IF refused IS NOT NULL THEN
            INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, reason)
            VALUES (p_verification_id, NULL, p_phone, p_purpose, p_message_id, 'refused', 'rate_limited:' || refused);
            RETURN QUERY SELECT 'refused'::text, 'rate_limited:' || refused, false;
            RETURN;
        END IF;
    END IF;

    IF have_code THEN
        UPDATE herald.sms_codes
           SET key_id = p_key_id, code_hash = p_code_hash, max_attempts = p_max_attempts,
               -- A test number's fixed code keeps its wrong tries across requests.
               attempts = CASE WHEN p_test AND cur.test_number THEN cur.attempts ELSE 0 END,
               test_number = p_test, expires_at = now() + make_interval(secs => p_ttl_seconds),
               last_sent_at = now(), sends = sends + 1, guess_limit = p_guess_limit,
               guess_window_seconds = p_guess_window_seconds, lockout_seconds = p_lockout_seconds,
               lockout_max_seconds = p_lockout_max_seconds
         WHERE id = cur.id;
        code_row := cur.id;
        new_sends := cur.sends + 1;
    ELSE
        new_sends := 1;
        INSERT INTO herald.sms_codes (phone_number, purpose, tenant, status, key_id, code_hash, max_attempts, test_number, expires_at, last_sent_at, sends,
                                      guess_limit, guess_window_seconds, lockout_seconds, lockout_max_seconds)
        VALUES (p_phone, p_purpose, p_tenant, 'pending', p_key_id, p_code_hash, p_max_attempts, p_test,
                now() + make_interval(secs => p_ttl_seconds), now(), 1,
                p_guess_limit, p_guess_window_seconds, p_lockout_seconds, p_lockout_max_seconds)
        ON CONFLICT (phone_number, purpose, tenant) WHERE status = 'pending' DO NOTHING
        RETURNING id INTO code_row;
        IF code_row IS NULL THEN
            RAISE EXCEPTION 'a concurrent request created the pending code; try again' USING ERRCODE = '40001';
        END IF;
    END IF;
    INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends, owner_key)
    VALUES (p_verification_id, code_row, p_phone, p_purpose, p_message_id, CASE WHEN p_test THEN 'test' ELSE 'sending' END, new_sends, p_owner_key);
    RETURN QUERY SELECT CASE WHEN p_test THEN 'test' ELSE 'send' END, NULL::text, false;
END;
$function$;
