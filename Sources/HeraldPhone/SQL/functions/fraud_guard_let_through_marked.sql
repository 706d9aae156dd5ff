-- Keeps herald.sms_fraud_let_through (issue 48) as marks come and go: a mark written by the
-- fraud guard (herald.fraud_guard_check) adds one to its region's and prefix's minute, unless its
-- verification already ended reused, refused or failed; one rewritten for other scopes (a
-- redelivered job, its verification not yet written) moves; one deleted takes its one off.
-- Its verification turning reused, refused or failed, or back, is herald.fraud_guard_let_through_outcome's.
-- A row trigger: the guard writes one mark per request, in the statement that judges it, and the
-- next request of the same group reads the count it leaves (a burst is judged inside itself).
-- Except in a group judged by herald.fraud_guard_judge (herald.fraud_guard_group 'on'): the marks
-- this transaction makes (created_at = now()) are the group's to count, once, at its end.
CREATE OR REPLACE FUNCTION herald.fraud_guard_let_through_marked()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    -- A mark of this minute or before is read by no window (herald.fraud_guard_let_through_add):
    -- a cleanup run's purge of old marks looks nothing up.
    v_oldest timestamptz := date_trunc('minute', now()) - interval '1 day';
BEGIN
    IF TG_OP <> 'DELETE' AND NEW.created_at = now() AND current_setting('herald.fraud_guard_group', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND (NEW.verification_id, NEW.region, NEW.prefix, NEW.created_at)
                            IS NOT DISTINCT FROM (OLD.verification_id, OLD.region, OLD.prefix, OLD.created_at) THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND date_trunc('minute', OLD.created_at) > v_oldest AND NOT EXISTS (
           SELECT 1 FROM herald.sms_verifications v
            WHERE v.verification_id = OLD.verification_id AND v.state IN ('reused', 'refused', 'failed')) THEN
        PERFORM herald.fraud_guard_let_through_add(OLD.region, OLD.prefix, OLD.created_at, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND date_trunc('minute', NEW.created_at) > v_oldest AND NOT EXISTS (
           SELECT 1 FROM herald.sms_verifications v
            WHERE v.verification_id = NEW.verification_id AND v.state IN ('reused', 'refused', 'failed')) THEN
        PERFORM herald.fraud_guard_let_through_add(NEW.region, NEW.prefix, NEW.created_at, 1);
    END IF;
    RETURN NULL;
END;
$function$;

CREATE OR REPLACE TRIGGER sms_fraud_marks_let_through AFTER INSERT OR UPDATE OR DELETE ON herald.sms_fraud_marks
    FOR EACH ROW
    EXECUTE FUNCTION herald.fraud_guard_let_through_marked();
