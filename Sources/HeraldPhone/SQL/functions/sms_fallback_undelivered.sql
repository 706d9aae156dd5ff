-- An undelivered receipt for provider message p_provider_message_id of verification
-- p_verification_id, in the transaction of the receipt's job: when the verification has a further
-- channel, waits for it (no fallback job is sending one), and that message is its current send (not
-- an earlier channel's, reported late), the next channel's `sms.fallback` job is enqueued at once.
-- True when it was.
CREATE OR REPLACE FUNCTION herald.sms_fallback_undelivered(p_verification_id text, p_provider_message_id text, p_exchange text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_step integer;
BEGIN
    SELECT f.step INTO v_step
      FROM herald.sms_fallbacks f JOIN herald.sms_verifications v ON v.verification_id = f.verification_id
     WHERE f.verification_id = p_verification_id AND f.state = 'waiting' AND v.state = 'sent' AND v.provider_message_id = p_provider_message_id;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM herald.sms_fallback_schedule(p_verification_id, v_step + 1, 'undelivered', p_exchange, NULL);
    RETURN true;
END;
$function$;
