-- Legacy migrations 6, 10 and 15 defined it in turn; the notes of 10 and 15 (15's is the latest).
-- Legacy migration 10:
-- Decides one email.action job: records the request (or finds it), supersedes an earlier
-- try's pending code (and, for reset_password, every pending reset code of the address),
-- and stores the new code (p_code_hash NULL: the no-account note or silence). o_decision:
--   send     send now (o_uncertain: an earlier try's worker died mid-send)
--   done     decided before (o_state: the request's state)
--   busy     another live worker is sending this request
--   invalid  o_reason: the request_id was used with another email, mode or old_email, or
--            a recover_email job Herald did not enqueue
--
-- Legacy migration 15:
-- As in migration 10, with the request's limits (p_scopes, p_keys, p_windows, p_maxes),
-- counted when the request is new, and one more decision:
--   refused  a limit is full (o_reason rate_limited:<scope>): the request is recorded
--            failed with that reason and nothing is sent. A recover_email notice is
--            never new here (the consume recorded it), so it is never refused.
CREATE OR REPLACE FUNCTION herald.email_prepare(p_request_id text, p_message_id text, p_email text, p_mode text, p_state text, p_owner_key bigint, p_key_id text, p_code_hash bytea, p_settings jsonb, p_expires_seconds integer, p_paired_email text, p_recovery_job text, p_recovery_exchange text, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[])
 RETURNS TABLE(o_decision text, o_state text, o_uncertain boolean, o_reason text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    v_row herald.email_requests;
    v_owner_gone boolean;
    v_uncertain boolean := false;
    v_refused text;
BEGIN
    INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, owner_key,
                                       paired_email, recovery_job, recovery_exchange)
    SELECT p_request_id, p_message_id, p_email, p_mode, p_state, p_owner_key,
           p_paired_email, p_recovery_job, p_recovery_exchange
     WHERE p_mode <> 'recover_email'
    ON CONFLICT (request_id) DO NOTHING;
    IF FOUND THEN
        -- A new request: every limit is counted (sliding windows), for every mode and
        -- whether or not the address has an account, so a refusal tells nothing.
        v_refused := herald.email_rate_take(p_scopes, p_keys, p_windows, p_maxes, now());
        IF v_refused IS NOT NULL THEN
            UPDATE herald.email_requests SET state = 'failed', reason = 'rate_limited:' || v_refused, owner_key = NULL
             WHERE request_id = p_request_id;
            RETURN QUERY SELECT 'refused'::text, 'failed'::text, false, 'rate_limited:' || v_refused;
            RETURN;
        END IF;
    ELSE
        SELECT * INTO v_row FROM herald.email_requests r WHERE r.request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'invalid'::text, NULL::text, false, 'mode: recover_email is enqueued by Herald only'::text;
            RETURN;
        ELSIF v_row.email <> p_email THEN
            RETURN QUERY SELECT 'invalid'::text, v_row.state, false, 'request_id was used with another email'::text;
            RETURN;
        ELSIF v_row.mode <> p_mode THEN
            RETURN QUERY SELECT 'invalid'::text, v_row.state, false, 'request_id was used with another mode'::text;
            RETURN;
        ELSIF p_mode = 'verify_and_change_email' AND v_row.paired_email IS DISTINCT FROM p_paired_email THEN
            RETURN QUERY SELECT 'invalid'::text, v_row.state, false, 'request_id was used with another old_email'::text;
            RETURN;
        END IF;
        -- No live sender: no owner, this very job again (the runner never runs a message id
        -- twice at once; a re-run after a database outage), or an owner whose presence lock
        -- is gone (the worker died).
        v_owner_gone := v_row.owner_key IS NULL OR (v_row.owner_key = p_owner_key AND v_row.message_id = p_message_id)
                        OR pg_try_advisory_xact_lock_shared(v_row.owner_key);
        IF v_row.state = 'sending' AND NOT v_owner_gone THEN
            RETURN QUERY SELECT 'busy'::text, v_row.state, false, NULL::text;
            RETURN;
        ELSIF v_row.state = 'sending' THEN
            v_uncertain := true;
        ELSIF v_row.state NOT IN ('retrying', 'queued') THEN
            RETURN QUERY SELECT 'done'::text, v_row.state, false, NULL::text;
            RETURN;
        END IF;
        UPDATE herald.email_codes SET status = 'superseded' WHERE request_id = p_request_id AND status = 'pending';
        UPDATE herald.email_requests
           SET state = p_state, owner_key = p_owner_key, message_id = p_message_id,
               uncertain_sends = uncertain_sends + v_uncertain::int, updated_at = now()
         WHERE request_id = p_request_id;
    END IF;
    IF p_code_hash IS NOT NULL THEN
        IF p_mode = 'reset_password' THEN
            UPDATE herald.email_codes SET status = 'superseded'
             WHERE email = p_email AND mode = 'reset_password' AND status = 'pending';
        END IF;
        INSERT INTO herald.email_codes (request_id, email, mode, key_id, code_hash, settings, status, expires_at)
        VALUES (p_request_id, p_email, p_mode, p_key_id, p_code_hash, p_settings, 'pending',
                now() + make_interval(secs => p_expires_seconds));
    END IF;
    RETURN QUERY SELECT 'send'::text, p_state, v_uncertain, NULL::text;
END
$function$;
