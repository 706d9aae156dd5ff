-- Voids the pending email code verification p_verification_id carried (a Twilio Verify
-- verification canceled or approved by its update): a check of it answers `expired` from now on.
-- True when a pending code was voided.
CREATE OR REPLACE FUNCTION herald.email_otp_void(p_verification_id text)
 RETURNS boolean
 LANGUAGE sql
AS $function$
    WITH voided AS (
        UPDATE herald.email_otp_codes c SET status = 'expired', finished_at = now()
          FROM herald.email_otp_verifications v
         WHERE v.verification_id = p_verification_id AND c.id = v.code_id AND c.status = 'pending'
        RETURNING c.id)
    SELECT EXISTS (SELECT 1 FROM voided);
$function$;
