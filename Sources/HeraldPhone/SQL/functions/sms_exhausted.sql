-- A job dead-lettered after runner.max_attempts: its verification ends `failed` with the
-- reason, and its code `failed` unless a later send of the code (another verification's)
-- superseded this one's. A verification without a row yet gets one, `failed`. False when
-- there is nothing of this job to end: the verification was decided meanwhile, names
-- another number or purpose, or a live worker is sending it now.
CREATE OR REPLACE FUNCTION herald.sms_exhausted(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_reason text)
 RETURNS boolean
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    ver herald.sms_verifications%ROWTYPE;
BEGIN
    SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO herald.sms_verifications (verification_id, phone_number, purpose, message_id, state, reason)
        VALUES (p_verification_id, p_phone, p_purpose, p_message_id, 'failed', p_reason);
        RETURN true;
    END IF;
    IF ver.phone_number <> p_phone OR ver.purpose <> p_purpose OR ver.state NOT IN ('sending', 'retrying')
       OR (ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key)) THEN
        RETURN false;
    END IF;
    UPDATE herald.sms_verifications SET state = 'failed', reason = p_reason, updated_at = now()
     WHERE verification_id = p_verification_id;
    UPDATE herald.sms_codes SET status = 'failed', finished_at = now()
     WHERE id = ver.code_id AND status = 'pending' AND sends IS NOT DISTINCT FROM ver.code_sends;
    RETURN true;
END;
$function$;
