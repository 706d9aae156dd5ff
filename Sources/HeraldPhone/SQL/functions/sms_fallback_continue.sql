-- The next channel in the same `sms.fallback` job: job p_message_id holds verification
-- p_verification_id's step (its fallback row `sending` under it) and the channel it sent on
-- refused the code or was down. May the next channel go out now, with the same code?
-- herald.sms_fallback_judge decides, as it decides every step, on what may have changed while the
-- provider answered: a send delivered, the code closed, the fraud guard's pause p_paused (judged by
-- the caller just before), the code's budget p_max_paid_sends (less this job's own send in flight,
-- which the refused channel did not make). Not the send limits: the job took them for the step's
-- one send, and a refused channel is not paid. Writes nothing: the job records what it did.
--   done  this job no longer holds the step (o_reason: the verification's state): no channel goes
CREATE OR REPLACE FUNCTION herald.sms_fallback_continue(p_verification_id text, p_message_id text, p_paused text, p_max_paid_sends integer)
 RETURNS TABLE (o_decision text, o_reason text)
 LANGUAGE plpgsql
AS $function$
DECLARE
    ver herald.sms_verifications%ROWTYPE;
    v_since timestamptz;
BEGIN
    SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    SELECT f.created_at INTO v_since FROM herald.sms_fallbacks f
     WHERE f.verification_id = p_verification_id AND f.message_id = p_message_id AND f.state = 'sending'
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'done'::text, ver.state;
        RETURN;
    END IF;
    RETURN QUERY SELECT j.o_decision, j.o_reason
                   FROM herald.sms_fallback_judge(p_verification_id, ver.code_id, ver.code_sends, ver.phone_number, v_since,
                                                  p_paused, p_max_paid_sends, 1, NULL, NULL, NULL, NULL) j;
END;
$function$;
