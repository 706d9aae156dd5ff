-- The next channel in the same `sms.fallback` job: job p_message_id, on worker p_owner_key, holds
-- verification p_verification_id's step (its fallback row `sending` under both) and the channel it
-- sent on refused the code or was down. May the next channel go out now, with the same code?
-- herald.sms_fallback_judge decides, as it decides every step, on what may have changed while the
-- provider answered: a send delivered, the code closed, the fraud guard's pause p_paused (judged by
-- the caller just before), the code's budget p_max_paid_sends (this job's send in flight counted by
-- what its calls did: p_uncertain_sends, 1 when one may have reached a provider, else 0). Not the
-- send limits: the job took them for the step's one send, and a refused channel is not paid.
-- Writes nothing: the job records what it did.
--   done  this job and worker no longer hold the step (its job redelivered and taken by another
--         worker; o_reason: the verification's state): no channel goes
CREATE OR REPLACE FUNCTION herald.sms_fallback_continue(p_verification_id text, p_message_id text, p_owner_key bigint, p_uncertain_sends integer,
                                                        p_paused text, p_max_paid_sends integer)
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
       AND f.owner_key = p_owner_key
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'done'::text, ver.state;
        RETURN;
    END IF;
    RETURN QUERY SELECT j.o_decision, j.o_reason
                   FROM herald.sms_fallback_judge(p_verification_id, ver.code_id, ver.code_sends, ver.phone_number, v_since,
                                                  p_paused, p_max_paid_sends, 1 - p_uncertain_sends, NULL, NULL, NULL, NULL) j;
END;
$function$;
