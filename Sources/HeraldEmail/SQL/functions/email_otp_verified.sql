-- The right code for email code p_code_id (pending, live, its row locked by the caller,
-- herald.email_otp_find): it is used up, and its address's wrong codes (of every purpose) are
-- forgotten. False when the code was not pending.
CREATE OR REPLACE FUNCTION herald.email_otp_verified(p_code_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    v_email text;
BEGIN
    UPDATE herald.email_otp_codes SET status = 'verified', finished_at = now()
     WHERE id = p_code_id AND status = 'pending'
    RETURNING email INTO v_email;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    DELETE FROM herald.email_otp_guess_failures WHERE email = v_email;
    RETURN true;
END;
$function$;
