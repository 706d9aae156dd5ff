-- Decides a `sms.fallback` job (message id p_message_id): may verification p_verification_id's
-- channel p_step (0-based) go out now? Atomically, in one round trip. The verification stays
-- `sent` throughout (its earlier send stands); the fallback row holds the step's progress.
--   send       yes: the fallback is `sending` under this job and this worker (p_owner_key), the
--              code's sends counted (the same code: its hash, expiry and wrong tries stay), the
--              send limits p_scopes… taken; o_channels, o_job and the sealed code are returned.
--              o_uncertain: this job's earlier try may have reached a provider (its worker stopped
--              between the provider's answer and its commit); on a retry's delivered or closed
--              too, that try counted in uncertain_sends.
--   busy       this job's earlier try is being sent by a live worker: decide again later
--   early      a `timeout` job before the step's wait ended (relayed without its wait queue)
--   done       nothing to do: another trigger took this step, or the verification moved on
--   gone       the verification has no fallback left (its last channel was sent, or it ended)
--   delivered, closed, refused: herald.sms_fallback_judge's, the one judgment of every step (o_reason
--              its reason): the fallback ends, the earlier send stands; a refused one leaves the
--              verification `fallback_refused:<o_reason>`. A new step is judged by all of it: the
--              fraud guard's pause p_paused (herald.fraud_guard_check with p_again, judged by the
--              caller just before), the code's budget of paid sends p_max_paid_sends
--              (sms.fallback.max_paid_sends), and the send limits p_scopes…, which hold the per-IP
--              limit of the request that started the verification (issue 46: every paid send is
--              judged as the first was). A retry of this job's step, judged when it was first
--              taken, by what may have changed since: a send delivered, the code closed.
-- Locks: the verification, its fallback row, the rate counters (herald.sms_rate_take), then the
-- code, as herald.sms_prepare_batch takes counters before codes.
CREATE OR REPLACE FUNCTION herald.sms_fallback_take(p_verification_id text, p_step integer, p_reason text, p_message_id text, p_owner_key bigint,
                                                    p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[],
                                                    p_paused text DEFAULT NULL, p_max_paid_sends integer DEFAULT NULL)
 RETURNS TABLE (o_decision text, o_reason text, o_uncertain boolean, o_channels text[], o_job jsonb,
                o_key_id text, o_nonce bytea, o_ciphertext bytea, o_tag bytea)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    ver herald.sms_verifications%ROWTYPE;
    f herald.sms_fallbacks%ROWTYPE;
    cur herald.sms_codes%ROWTYPE;
    own boolean;
    v_decision text;
    v_reason text;
BEGIN
    SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    IF FOUND THEN
        SELECT * INTO f FROM herald.sms_fallbacks WHERE verification_id = p_verification_id FOR UPDATE;
    END IF;
    IF f.verification_id IS NULL THEN
        RETURN QUERY SELECT 'gone'::text, NULL::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    -- This job ran before: a worker that stopped mid-send, or a try that failed.
    own := f.state IN ('sending', 'retrying') AND f.message_id = p_message_id;
    IF own AND f.state = 'sending' AND f.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(f.owner_key) THEN
        RETURN QUERY SELECT 'busy'::text, NULL::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    IF NOT own THEN
        IF f.state <> 'waiting' OR f.step <> p_step - 1 OR ver.state <> 'sent' THEN
            RETURN QUERY SELECT 'done'::text, f.state, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
            RETURN;
        END IF;
        IF p_reason = 'timeout' AND f.due_at > now() + interval '1 second' THEN
            RETURN QUERY SELECT 'early'::text, NULL::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
            RETURN;
        END IF;
    END IF;
    -- The one judgment of a step (herald.sms_fallback_judge): a new step by all of it; a retry of
    -- this job's step, judged when it was first taken, by what may have changed since (a send
    -- delivered, the code closed).
    SELECT j.o_decision, j.o_reason INTO v_decision, v_reason
      FROM herald.sms_fallback_judge(p_verification_id, ver.code_id, ver.code_sends, ver.phone_number, f.created_at,
                                     CASE WHEN NOT own THEN p_paused END, CASE WHEN NOT own THEN p_max_paid_sends END, 0,
                                     CASE WHEN NOT own THEN p_scopes END, p_keys, p_windows, p_maxes) j;
    IF v_decision = 'refused' THEN
        DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
        UPDATE herald.sms_verifications SET reason = 'fallback_refused:' || v_reason, updated_at = now()
         WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'refused'::text, v_reason, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    -- The code, now locked: still the one this verification's sends carry, pending, in time, its
    -- number not locked out.
    IF v_decision = 'send' THEN
        SELECT * INTO cur FROM herald.sms_codes WHERE id = ver.code_id FOR UPDATE;
        v_reason := herald.sms_code_closed(cur, ver.code_sends, ver.phone_number);
        v_decision := CASE WHEN v_reason IS NULL THEN 'send' ELSE 'closed' END;
    END IF;
    IF v_decision <> 'send' THEN
        DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
        -- A retry's end: the step's failure is over (its reason goes), and a try that stopped
        -- mid-send may have reached a provider (it stays counted: sms_paid_sends).
        IF own THEN
            UPDATE herald.sms_verifications
               SET reason = NULL, uncertain_sends = uncertain_sends + CASE WHEN f.state = 'sending' THEN 1 ELSE 0 END, updated_at = now()
             WHERE verification_id = p_verification_id;
        END IF;
        RETURN QUERY SELECT v_decision, v_reason, own AND f.state = 'sending', NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    IF own THEN
        UPDATE herald.sms_fallbacks SET state = 'sending', owner_key = p_owner_key, updated_at = now()
         WHERE verification_id = p_verification_id;
        UPDATE herald.sms_verifications
           SET uncertain_sends = uncertain_sends + CASE WHEN f.state = 'sending' THEN 1 ELSE 0 END, updated_at = now()
         WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'send'::text, NULL::text, f.state = 'sending', f.channels, f.job, f.key_id, f.nonce, f.ciphertext, f.tag;
        RETURN;
    END IF;
    UPDATE herald.sms_fallbacks
       SET step = p_step, state = 'sending', message_id = p_message_id, owner_key = p_owner_key, due_at = NULL, updated_at = now()
     WHERE verification_id = p_verification_id;
    UPDATE herald.sms_codes SET sends = sends + 1, last_sent_at = now() WHERE id = cur.id;
    UPDATE herald.sms_verifications SET code_sends = cur.sends + 1, updated_at = now() WHERE verification_id = p_verification_id;
    RETURN QUERY SELECT 'send'::text, NULL::text, false, f.channels, f.job, f.key_id, f.nonce, f.ciphertext, f.tag;
END;
$function$;
