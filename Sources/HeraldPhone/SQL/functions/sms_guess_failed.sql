-- A wrong code for code p_code_id (its row locked by the caller): one more try used (the
-- code dies at max_attempts), one more failure for its number (every purpose counts: migration 11); at guess_limit
-- failures the number is locked for lockout_seconds x 2^(earlier locks), at most
-- lockout_max_seconds, and its failures start again. Returns the code's tries left and,
-- when this failure started a lock, its end.
--
-- Sequential scans off, as in the functions of issue 31: every table here is read by key, and
-- on a herald.sms_guess_failures vacuumed while empty the generic plans a pooled connection keeps
-- scanned it whole: the function took 2.63 ms instead of 0.14 (1,042 wrong-code checks/s through
-- herald-api instead of 1,749, `make bench` BENCH_ONLY=api with BENCH_API_OTHER_FAILURES=0).
CREATE OR REPLACE FUNCTION herald.sms_guess_failed(p_code_id bigint)
 RETURNS TABLE(o_attempts_left integer, o_locked_until timestamp with time zone)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    c herald.sms_codes%ROWTYPE;
    g herald.sms_guess_failures%ROWTYPE;
    v_window interval;
    v_lock timestamptz;
BEGIN
    UPDATE herald.sms_codes
       SET attempts = attempts + 1,
           status = CASE WHEN attempts + 1 >= max_attempts THEN 'dead' ELSE status END,
           finished_at = CASE WHEN attempts + 1 >= max_attempts THEN now() ELSE finished_at END
     WHERE id = p_code_id
    RETURNING * INTO c;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'sms code % not found', p_code_id;
    END IF;
    v_window := make_interval(secs => coalesce(c.guess_window_seconds, 86400));
    INSERT INTO herald.sms_guess_failures (phone_number, expires_at)
    VALUES (c.phone_number, now() + v_window)
    ON CONFLICT (phone_number) DO NOTHING;
    SELECT * INTO g FROM herald.sms_guess_failures
     WHERE phone_number = c.phone_number FOR UPDATE;
    IF greatest(g.last_failure_at, g.locked_until) <= now() - v_window THEN
        -- A quiet window since the last failure and the last lock: start again.
        g.failures := 0;
        g.lockouts := 0;
    END IF;
    g.failures := g.failures + 1;
    IF g.failures >= coalesce(c.guess_limit, 10) THEN
        v_lock := now() + make_interval(secs => least(
            coalesce(c.lockout_seconds, 3600)::double precision * power(2, least(g.lockouts, 40)),
            coalesce(c.lockout_max_seconds, 86400)));
        g.locked_until := v_lock;
        g.lockouts := g.lockouts + 1;
        g.failures := 0;
    END IF;
    UPDATE herald.sms_guess_failures
       SET failures = g.failures, lockouts = g.lockouts, last_failure_at = now(), locked_until = g.locked_until,
           expires_at = greatest(now(), g.locked_until) + v_window
     WHERE phone_number = c.phone_number;
    RETURN QUERY SELECT greatest(c.max_attempts - c.attempts, 0), v_lock;
END;
$function$;
