-- Keeps herald.sms_fraud_let_through (issue 48) as verifications end: a marked verification
-- written reused, refused or failed (a code reused, a limit's refusal after the guard let it
-- through), or turning so, takes its mark's one off its region's and prefix's minute; one
-- leaving those states (a later request of the same verification id sending again) adds it back.
-- Row triggers whose WHEN says whether the state crossed that line: the other rows (every
-- `sending` written, every `sent`) never call it. A verification deleted is not counted again,
-- as the guard's old count would have: cleanup runs purge verifications a day or more old
-- (cleanup.purge.sms_days), whose marks are older still, and no window reaches them.
CREATE OR REPLACE FUNCTION herald.fraud_guard_let_through_outcome()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    m herald.sms_fraud_marks%ROWTYPE;
BEGIN
    SELECT * INTO m FROM herald.sms_fraud_marks WHERE verification_id = NEW.verification_id;
    IF FOUND THEN
        PERFORM herald.fraud_guard_let_through_add(m.region, m.prefix, m.created_at,
                                                   CASE WHEN NEW.state IN ('reused', 'refused', 'failed') THEN -1 ELSE 1 END);
    END IF;
    RETURN NULL;
END;
$function$;

CREATE OR REPLACE TRIGGER sms_verifications_let_through_written AFTER INSERT ON herald.sms_verifications
    FOR EACH ROW
    WHEN (new.state IN ('reused', 'refused', 'failed'))
    EXECUTE FUNCTION herald.fraud_guard_let_through_outcome();

CREATE OR REPLACE TRIGGER sms_verifications_let_through_ended AFTER UPDATE OF state ON herald.sms_verifications
    FOR EACH ROW
    WHEN ((old.state IN ('reused', 'refused', 'failed')) IS DISTINCT FROM (new.state IN ('reused', 'refused', 'failed')))
    EXECUTE FUNCTION herald.fraud_guard_let_through_outcome();
