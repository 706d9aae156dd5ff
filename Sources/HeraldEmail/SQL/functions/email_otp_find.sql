-- The check API's first step (EmailCodeVerifier): the latest code mailed to (p_email, p_purpose)
-- in tenant p_tenant ('': none; email migration 8),
-- its row locked until the caller's transaction ends (checks of one code run one after another),
-- a pending code past its expiry marked `expired`, and, when the address is locked for guessing
-- (herald.email_otp_guess_failed), the seconds left of the lock. No row: no code was ever mailed
-- for the pair (or its send was refused).
CREATE OR REPLACE FUNCTION herald.email_otp_find(p_email text, p_purpose text, p_tenant text DEFAULT '')
 RETURNS TABLE(o_id bigint, o_status text, o_key_id text, o_code_hash bytea, o_locked_seconds integer)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    c herald.email_otp_codes%ROWTYPE;
    v_locked integer;
BEGIN
    SELECT * INTO c FROM herald.email_otp_codes
     WHERE email = p_email AND purpose = p_purpose AND tenant = p_tenant
     ORDER BY id DESC LIMIT 1 FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF c.status = 'pending' AND c.expires_at <= now() THEN
        UPDATE herald.email_otp_codes SET status = 'expired', finished_at = now() WHERE id = c.id;
        c.status := 'expired';
    END IF;
    SELECT ceil(extract(epoch FROM g.locked_until - now()))::integer INTO v_locked
      FROM herald.email_otp_guess_failures g WHERE g.email = p_email AND g.locked_until > now();
    RETURN QUERY SELECT c.id, c.status, c.key_id, c.code_hash, v_locked;
END;
$function$;
