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
    m_created timestamptz;
BEGIN
    SELECT m.region, m.prefix, m.created_at INTO m_region, m_prefix, m_created
      FROM herald.sms_verifications v JOIN herald.sms_fraud_marks m USING (verification_id)
     WHERE v.code_id = NEW.id AND v.state = 'sent'
     ORDER BY m.created_at DESC LIMIT 1;
    IF FOUND THEN
        PERFORM herald.fraud_guard_count(m_region, m_prefix, 0, 1);
        -- A code let through during a lift's grace and verified counts toward the grace's budget
        -- (herald.fraud_guard_check; migration 12).
        UPDATE herald.sms_fraud_pauses SET grace_verified = grace_verified + 1
         WHERE ((scope = 'region' AND key = m_region) OR (scope = 'prefix' AND key = m_prefix))
           AND state = 'lifted' AND grace_until > now() AND lifted_at <= m_created;
    END IF;
    RETURN NULL;
END;
$function$;

CREATE OR REPLACE TRIGGER sms_codes_fraud_guard_verified AFTER UPDATE OF status ON herald.sms_codes
    FOR EACH ROW
    WHEN (((new.status = 'verified'::text) AND (old.status IS DISTINCT FROM 'verified'::text)))
    EXECUTE FUNCTION herald.fraud_guard_verified();
