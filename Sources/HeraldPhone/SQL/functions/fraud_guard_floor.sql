-- The floor of scope p_scope/p_key (issue 46): its configured floor p_floor, or p_usual_multiple
-- times the codes its users verify in a usual window of p_window_minutes, whichever is more; so
-- pausing a scope with traffic of its own costs an attacker a multiple of that traffic, not a fixed
-- floor. The usual is what was verified in the day before the window (per window's length):
-- verified, not sent, so an attack's own sends never raise it. Kept per scope in
-- herald.sms_fraud_baselines, computed again at most once an hour. Read only when a scope has
-- reached its configured floor with a conversion that would pause it: the send path of a scope
-- below it never reads the day's buckets.
CREATE OR REPLACE FUNCTION herald.fraud_guard_floor(p_scope text, p_key text, p_floor integer, p_window_minutes integer,
                                                    p_usual_multiple double precision)
 RETURNS bigint
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    v_usual double precision;
    v_at timestamptz;
BEGIN
    IF p_usual_multiple <= 0 THEN
        RETURN p_floor::bigint;
    END IF;
    SELECT b.usual_verified, b.computed_at INTO v_usual, v_at FROM herald.sms_fraud_baselines b WHERE b.scope = p_scope AND b.key = p_key;
    IF v_at IS NULL OR v_at <= now() - interval '1 hour' THEN
        SELECT coalesce(sum(c.verified), 0)::double precision * p_window_minutes / 1440 INTO v_usual
          FROM herald.sms_fraud_counts c
         WHERE c.scope = p_scope AND c.key = p_key
           AND c.minute > date_trunc('minute', now()) - make_interval(mins => p_window_minutes) - interval '1 day'
           AND c.minute <= date_trunc('minute', now()) - make_interval(mins => p_window_minutes);
        INSERT INTO herald.sms_fraud_baselines AS b (scope, key, usual_verified, computed_at)
        VALUES (p_scope, p_key, v_usual, now())
        ON CONFLICT (scope, key) DO UPDATE SET usual_verified = EXCLUDED.usual_verified, computed_at = EXCLUDED.computed_at;
    END IF;
    RETURN greatest(p_floor::bigint, ceil(p_usual_multiple * v_usual)::bigint);
END;
$function$;
