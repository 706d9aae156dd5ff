-- Ends a pause: not paused again before now + p_grace_seconds. False: it was not paused.
CREATE OR REPLACE FUNCTION herald.fraud_guard_lift(p_scope text, p_key text, p_by text, p_grace_seconds integer)
 RETURNS boolean
 LANGUAGE sql
AS $function$
    WITH lifted AS (
        UPDATE herald.sms_fraud_pauses
           SET state = 'lifted', lifted_at = now(), lifted_by = p_by, grace_until = now() + make_interval(secs => p_grace_seconds)
         WHERE scope = p_scope AND key = p_key AND state = 'paused'
        RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM lifted);
$function$;
