-- A `sms.fallback` job (p_message_id) whose channels all refused, or that ran out of attempts
-- (p_check_owner: then not while a live worker sends it): its fallback ends, and the
-- verification (still `sent`: its earlier channel's send stands, and its code with it) keeps
-- p_reason (NULL: none). Returns the verification (with its code) when this job held the
-- fallback, for the attempts written beside (AttemptLog); nothing otherwise.
CREATE OR REPLACE FUNCTION herald.sms_fallback_end(p_verification_id text, p_message_id text, p_reason text, p_check_owner boolean)
 RETURNS TABLE (verification_id text, code_id bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    f herald.sms_fallbacks%ROWTYPE;
BEGIN
    PERFORM 1 FROM herald.sms_verifications v WHERE v.verification_id = p_verification_id FOR UPDATE;
    SELECT * INTO f FROM herald.sms_fallbacks x
     WHERE x.verification_id = p_verification_id AND x.message_id = p_message_id AND x.state IN ('sending', 'retrying')
       FOR UPDATE;
    IF NOT FOUND OR (p_check_owner AND f.state = 'sending' AND f.owner_key IS NOT NULL
                     AND NOT pg_try_advisory_xact_lock_shared(f.owner_key)) THEN
        RETURN;
    END IF;
    DELETE FROM herald.sms_fallbacks x WHERE x.verification_id = p_verification_id;
    RETURN QUERY
    UPDATE herald.sms_verifications v SET reason = p_reason, updated_at = now()
     WHERE v.verification_id = p_verification_id
    RETURNING v.verification_id, v.code_id;
END;
$function$;
