-- A `sms.fallback` job (p_message_id) whose channels all failed, or that ran out of attempts: the
-- verification goes back to `sent` (its earlier channel's send stands, and its code with it) with
-- p_reason, and its fallback ends. Returns the verification (with its code) when this job held it,
-- for the attempts written beside (AttemptLog); nothing when it was not this job's.
CREATE OR REPLACE FUNCTION herald.sms_fallback_end(p_verification_id text, p_message_id text, p_reason text)
 RETURNS TABLE (verification_id text, code_id bigint)
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY
    UPDATE herald.sms_verifications v SET state = 'sent', reason = p_reason, updated_at = now()
     WHERE v.verification_id = p_verification_id AND v.state IN ('sending', 'retrying') AND v.message_id = p_message_id
    RETURNING v.verification_id, v.code_id;
    IF FOUND THEN
        DELETE FROM herald.sms_fallbacks f WHERE f.verification_id = p_verification_id;
    END IF;
END;
$function$;
