-- Decides a `sms.fallback` job (message id p_message_id): may verification p_verification_id's
-- channel p_step (0-based) go out now? Atomically, in one round trip. The verification stays
-- `sent` throughout (its earlier send stands); the fallback row holds the step's progress.
--   send       yes: the fallback is `sending` under this job and this worker (p_owner_key), the
--              code's sends counted (the same code: its hash, expiry and wrong tries stay), the
--              send limits p_scopes… taken; o_channels, o_job and the sealed code are returned.
--              o_uncertain: this job's earlier try may have reached a provider (its worker stopped
--              between the provider's answer and its commit).
--   busy       this job's earlier try is being sent by a live worker: decide again later
--   early      a `timeout` job before the step's wait ended (relayed without its wait queue)
--   done       nothing to do: another trigger took this step, or the verification moved on
--   gone       the verification has no fallback left (its last channel was sent, or it ended)
--   closed     the code was used, expired, superseded by another send, or its number is locked
--              out for guessing (o_reason): the fallback ends (checked on a retry too)
--   delivered  a send of the verification was delivered: no other channel is needed; the fallback ends
--   refused    a send limit (o_reason): the fallback ends, the earlier send stands; the verification
--              keeps `fallback_refused:<o_reason>` (migration 17)
--
-- Migration 17 (issue 46): every paid send is judged as the first was.
--   - p_paused: the fraud guard's refusal of this send (herald.fraud_guard_check with p_again),
--     judged by the caller just before: a paused region or prefix pauses its fallbacks too
--     (refused, o_reason the pause's `fraud_guard:<scope>:<key>`).
--   - The send limits p_scopes… hold the per-IP limit of the request that started the
--     verification (the job's client_ip), as its first send's did.
--   - p_max_paid_sends (sms.fallback.max_paid_sends, NULL: no budget): the sends of the
--     verification's code that reached a provider (accepted attempts of every verification that
--     shares the code, resends included, and the uncertain ones, which may have) reach it:
--     refused, `rate_limited:paid_sends`.
--   - delivered: any accepted send of the verification reported delivered ends the fallback,
--     not only the newest (an SMS delivered after WhatsApp went out stops the call after it).
-- The refusals are judged before the limits are taken, and a closed code before them: a refused
-- or closed step takes no quota (herald.sms_code_closed says why a code is closed).
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
    v_refused text;
    v_closed text;
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
        -- Any accepted send of the verification delivered (run-time partition pruning: the days since its fallback began).
        IF EXISTS (SELECT 1 FROM herald.sms_send_attempts a
                    WHERE a.verification_id = p_verification_id AND a.result = 'accepted' AND a.delivery_status = 'delivered'
                      AND a.created_at >= f.created_at - interval '1 minute') THEN
            DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
            RETURN QUERY SELECT 'delivered'::text, NULL::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
            RETURN;
        END IF;
        -- The code before the judgments (read without its lock: counters are locked before codes),
        -- so a step whose code is closed is judged by nothing and takes no quota.
        SELECT * INTO cur FROM herald.sms_codes WHERE id = ver.code_id;
        v_closed := herald.sms_code_closed(cur, ver.code_sends, ver.phone_number);
        IF v_closed IS NULL THEN
            -- Judged as the first send was: the guard's pause, the budget, then the limits (which a
            -- refused send does not take).
            v_refused := CASE WHEN p_paused IS NOT NULL THEN p_paused
                              WHEN p_max_paid_sends IS NOT NULL AND herald.sms_paid_sends(ver.code_id) >= p_max_paid_sends THEN 'rate_limited:paid_sends' END;
            IF v_refused IS NULL THEN
                v_refused := 'rate_limited:' || herald.sms_rate_take(p_scopes, p_keys, p_windows, p_maxes, now());
            END IF;
            IF v_refused IS NOT NULL THEN
                DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
                UPDATE herald.sms_verifications SET reason = 'fallback_refused:' || v_refused, updated_at = now()
                 WHERE verification_id = p_verification_id;
                RETURN QUERY SELECT 'refused'::text, v_refused, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
                RETURN;
            END IF;
        END IF;
    END IF;
    -- The code, first try or retry, now locked: still the one this verification's sends carry,
    -- pending, in time, its number not locked out.
    IF v_closed IS NULL THEN
        SELECT * INTO cur FROM herald.sms_codes WHERE id = ver.code_id FOR UPDATE;
        v_closed := herald.sms_code_closed(cur, ver.code_sends, ver.phone_number);
    END IF;
    IF v_closed IS NOT NULL THEN
        DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'closed'::text, v_closed, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
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
