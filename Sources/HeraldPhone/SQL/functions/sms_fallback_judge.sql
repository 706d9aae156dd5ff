-- The one judgment of a verification's next channel (docs/fallback.md): may verification
-- p_verification_id (its code p_code_id, sent as its p_code_sends-th send, to p_phone) send its
-- code on another channel now? Every step after the verification's first send asks it: a
-- `sms.fallback` job's step (herald.sms_fallback_take: everything, limits included; on its retry,
-- what may have changed since its step was judged) and, in that job, the next channel after one
-- whose providers refused the code or were down (herald.sms_fallback_continue: everything but the
-- limits, which the job took for the step's one send). The verification's own job judges its first
-- send once, whichever of its channels carries it (herald.sms_prepare_batch). In this order, the
-- first that holds:
--   delivered  a send of the verification accepted since p_since was delivered: the code arrived
--   closed     the code may not go out again (o_reason: herald.sms_code_closed's)
--   refused    (o_reason) the fraud guard's pause p_paused, judged by the caller just before; the
--              code's paid sends (herald.sms_paid_sends, less the caller's own p_own_sends in
--              flight) at p_max_paid_sends (`rate_limited:paid_sends`); a send limit of p_scopes…
--              (`rate_limited:<scope>`, taken when none refuses: a refused step takes no quota)
--   send       it may
-- A NULL p_paused, p_max_paid_sends or p_scopes is not judged. The code is read without its
-- lock (counters are locked before codes): herald.sms_fallback_take, which moves the code's
-- sends, locks it and asks herald.sms_code_closed again.
CREATE OR REPLACE FUNCTION herald.sms_fallback_judge(p_verification_id text, p_code_id bigint, p_code_sends integer, p_phone text,
                                                     p_since timestamptz, p_paused text, p_max_paid_sends integer, p_own_sends integer,
                                                     p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[])
 RETURNS TABLE (o_decision text, o_reason text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    cur herald.sms_codes%ROWTYPE;
    v_reason text;
BEGIN
    -- Any accepted send of the verification delivered (run-time partition pruning: the days since p_since).
    IF EXISTS (SELECT 1 FROM herald.sms_send_attempts a
                WHERE a.verification_id = p_verification_id AND a.result = 'accepted' AND a.delivery_status = 'delivered'
                  AND a.created_at >= p_since - interval '1 minute') THEN
        RETURN QUERY SELECT 'delivered'::text, NULL::text;
        RETURN;
    END IF;
    SELECT * INTO cur FROM herald.sms_codes WHERE id = p_code_id;
    v_reason := herald.sms_code_closed(cur, p_code_sends, p_phone);
    IF v_reason IS NOT NULL THEN
        RETURN QUERY SELECT 'closed'::text, v_reason;
        RETURN;
    END IF;
    v_reason := CASE WHEN p_paused IS NOT NULL THEN p_paused
                     WHEN p_max_paid_sends IS NOT NULL AND herald.sms_paid_sends(p_code_id) - p_own_sends >= p_max_paid_sends
                         THEN 'rate_limited:paid_sends' END;
    IF v_reason IS NULL AND p_scopes IS NOT NULL THEN
        v_reason := 'rate_limited:' || herald.sms_rate_take(p_scopes, p_keys, p_windows, p_maxes, now());
    END IF;
    IF v_reason IS NOT NULL THEN
        RETURN QUERY SELECT 'refused'::text, v_reason;
        RETURN;
    END IF;
    RETURN QUERY SELECT 'send'::text, NULL::text;
END;
$function$;
