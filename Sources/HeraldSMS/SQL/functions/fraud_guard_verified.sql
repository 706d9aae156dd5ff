-- A verification: the code turns `verified` (the check API's success), counted in the
-- scopes of the latest verification whose SMS carried it.
CREATE OR REPLACE FUNCTION herald.fraud_guard_verified()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    m_region text;
    m_prefix text;
BEGIN
    SELECT m.region, m.prefix INTO m_region, m_prefix
      FROM herald.sms_verifications v JOIN herald.sms_fraud_marks m USING (verification_id)
     WHERE v.code_id = NEW.id AND v.state = 'sent'
     ORDER BY m.created_at DESC LIMIT 1;
    IF FOUND THEN
        PERFORM herald.fraud_guard_count(m_region, m_prefix, 0, 1);
    END IF;
    RETURN NULL;
END;
$function$;

CREATE OR REPLACE TRIGGER sms_codes_fraud_guard_verified AFTER UPDATE OF status ON herald.sms_codes
    FOR EACH ROW
    WHEN (((new.status = 'verified'::text) AND (old.status IS DISTINCT FROM 'verified'::text)))
    EXECUTE FUNCTION herald.fraud_guard_verified();
