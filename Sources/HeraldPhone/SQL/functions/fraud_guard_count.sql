-- Adds sends and verifications to the current minute of a region and of a prefix
-- (herald.fraud_guard_verified calls it; herald.fraud_guard_sent has counted on its own since legacy 27).
CREATE OR REPLACE FUNCTION herald.fraud_guard_count(p_region text, p_prefix text, p_sent integer, p_verified integer)
 RETURNS void
 LANGUAGE sql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
    INSERT INTO herald.sms_fraud_counts AS c (scope, key, minute, sent, verified)
    VALUES ('region', p_region, date_trunc('minute', now()), p_sent, p_verified),
           ('prefix', p_prefix, date_trunc('minute', now()), p_sent, p_verified)
    ON CONFLICT (scope, key, minute) DO UPDATE SET sent = c.sent + EXCLUDED.sent, verified = c.verified + EXCLUDED.verified;
$function$;
