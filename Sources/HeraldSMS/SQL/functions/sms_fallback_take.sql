-- Decides a `sms.fallback` job (message id p_message_id): may verification p_verification_id's
-- channel p_step (0-based) go out now? Atomically, in one round trip:
--   send       yes: the verification is `sending` under this job (its channel, code_sends), the
--              code's sends counted (the same code: its hash, expiry and wrong tries stay), the
--              send limits p_scopes… taken; o_channels, o_job and the sealed code are returned.
--              o_uncertain: this job's earlier try may have reached a provider (its worker stopped
--              between the provider's answer and its commit).
--   busy       this job's earlier try is being sent by a live worker: decide again later
--   early      a `timeout` job before the step's wait ended (relayed without its wait queue)
--   done       nothing to do: another trigger took this step, or the verification moved on
--   gone       the verification has no fallback left (its last channel was sent, or it ended)
--   closed     the code was used, expired, superseded by another send, or its number is locked
--              out for guessing (o_reason): the fallback ends
--   delivered  the last send was delivered: no other channel is needed; the fallback ends
--   refused    a send limit (o_reason): the fallback ends, the earlier send stands
CREATE OR REPLACE FUNCTION herald.sms_fallback_take(p_verification_id text, p_step integer, p_reason text, p_message_id text, p_owner_key bigint,
                                                    p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[])
 RETURNS TABLE (o_decision text, o_reason text, o_uncertain boolean, o_channels text[], o_job jsonb,
                o_key_id text, o_nonce bytea, o_ciphertext bytea, o_tag bytea)
 LANGUAGE plpgsql
AS $function$
DECLARE
    f herald.sms_fallbacks%ROWTYPE;
    ver herald.sms_verifications%ROWTYPE;
    cur herald.sms_codes%ROWTYPE;
    v_status text;
    v_refused text;
BEGIN
    SELECT * INTO f FROM herald.sms_fallbacks WHERE verification_id = p_verification_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'gone'::text, NULL::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    IF ver.state IN ('sending', 'retrying') AND ver.message_id = p_message_id THEN
        -- This job ran before: a worker that stopped mid-send, or a try that failed.
        IF ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key) THEN
            RETURN QUERY SELECT 'busy'::text, NULL::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
            RETURN;
        END IF;
        UPDATE herald.sms_verifications
           SET state = 'sending', owner_key = p_owner_key, updated_at = now(),
               uncertain_sends = uncertain_sends + CASE WHEN ver.state = 'sending' THEN 1 ELSE 0 END
         WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'send'::text, NULL::text, ver.state = 'sending', f.channels, f.job, f.key_id, f.nonce, f.ciphertext, f.tag;
        RETURN;
    END IF;
    IF f.step <> p_step - 1 OR ver.state <> 'sent' THEN
        RETURN QUERY SELECT 'done'::text, ver.state::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    IF p_reason = 'timeout' AND f.due_at > now() + interval '1 second' THEN
        RETURN QUERY SELECT 'early'::text, NULL::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    SELECT * INTO cur FROM herald.sms_codes WHERE id = ver.code_id FOR UPDATE;
    IF NOT FOUND OR cur.status <> 'pending' OR cur.expires_at <= now() OR cur.sends IS DISTINCT FROM ver.code_sends
       OR EXISTS (SELECT 1 FROM herald.sms_guess_failures WHERE phone_number = ver.phone_number AND locked_until > now()) THEN
        DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'closed'::text,
                            CASE WHEN cur.status IS NULL OR cur.status <> 'pending' THEN 'code_' || coalesce(cur.status, 'gone')
                                 WHEN cur.expires_at <= now() THEN 'code_expired'
                                 WHEN cur.sends IS DISTINCT FROM ver.code_sends THEN 'code_sent_again'
                                 ELSE 'locked_out' END,
                            false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    -- The verification's newest accepted send (run-time partition pruning: the days since its fallback began).
    SELECT a.delivery_status INTO v_status
      FROM herald.sms_send_attempts a
     WHERE a.verification_id = p_verification_id AND a.result = 'accepted' AND a.created_at >= f.created_at - interval '1 minute'
     ORDER BY a.created_at DESC, a.id DESC
     LIMIT 1;
    IF v_status = 'delivered' THEN
        DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'delivered'::text, NULL::text, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    v_refused := herald.sms_rate_take(p_scopes, p_keys, p_windows, p_maxes, now());
    IF v_refused IS NOT NULL THEN
        DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'refused'::text, 'rate_limited:' || v_refused, false, NULL::text[], NULL::jsonb, NULL::text, NULL::bytea, NULL::bytea, NULL::bytea;
        RETURN;
    END IF;
    UPDATE herald.sms_fallbacks SET step = p_step, due_at = NULL, updated_at = now() WHERE verification_id = p_verification_id;
    UPDATE herald.sms_codes SET sends = sends + 1, last_sent_at = now() WHERE id = cur.id;
    UPDATE herald.sms_verifications
       SET state = 'sending', reason = NULL, message_id = p_message_id, owner_key = p_owner_key, code_sends = cur.sends + 1,
           channel = f.channels[p_step + 1], updated_at = now()
     WHERE verification_id = p_verification_id;
    RETURN QUERY SELECT 'send'::text, NULL::text, false, f.channels, f.job, f.key_id, f.nonce, f.ciphertext, f.tag;
END;
$function$;
