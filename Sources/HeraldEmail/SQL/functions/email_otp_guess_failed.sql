-- A wrong code for email code p_code_id (its row locked by the caller, herald.email_otp_find),
-- as herald.sms_guess_failed counts one for a phone number: one more try used (the code dies at
-- max_attempts), one more failure for its address (every purpose counts); at guess_limit failures
-- the address is locked for lockout_seconds x 2^(earlier locks), at most lockout_max_seconds, and
-- its failures start again. Returns the code's tries left and, when this failure started a lock,
-- its end.
CREATE OR REPLACE FUNCTION herald.email_otp_guess_failed(p_code_id bigint)
 RETURNS TABLE(o_attempts_left integer, o_locked_until timestamp with time zone)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    c herald.email_otp_codes%ROWTYPE;
    g herald.email_otp_guess_failures%ROWTYPE;
    v_window interval;
    v_lock timestamptz;
BEGIN
    UPDATE herald.email_otp_codes
       SET attempts = attempts + 1,
           status = CASE WHEN attempts + 1 >= max_attempts THEN 'dead' ELSE status END,
           finished_at = CASE WHEN attempts + 1 >= max_attempts THEN now() ELSE finished_at END
     WHERE id = p_code_id
    RETURNING * INTO c;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'email code % not found', p_code_id;
    END IF;
    v_window := make_interval(secs => c.guess_window_seconds);
    INSERT INTO herald.email_otp_guess_failures (email, expires_at)
    VALUES (c.email, now() + v_window)
    ON CONFLICT (email) DO NOTHING;
    SELECT * INTO g FROM herald.email_otp_guess_failures WHERE email = c.email FOR UPDATE;
    IF greatest(g.last_failure_at, g.locked_until) <= now() - v_window THEN
        -- A quiet window since the last failure and the last lock: start again.
        g.failures := 0;
        g.lockouts := 0;
    END IF;
    g.failures := g.failures + 1;
    IF g.failures >= c.guess_limit THEN
        v_lock := now() + make_interval(secs => least(
            c.lockout_seconds::double precision * power(2, least(g.lockouts, 40)), c.lockout_max_seconds));
        g.locked_until := v_lock;
        g.lockouts := g.lockouts + 1;
        g.failures := 0;
    END IF;
    UPDATE herald.email_otp_guess_failures
       SET failures = g.failures, lockouts = g.lockouts, last_failure_at = now(), locked_until = g.locked_until,
           expires_at = greatest(now(), g.locked_until) + v_window
     WHERE email = c.email;
    RETURN QUERY SELECT greatest(c.max_attempts - c.attempts, 0), v_lock;
END;
$function$;
