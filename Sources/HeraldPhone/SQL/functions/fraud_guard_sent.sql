-- Every UPDATE of verifications: those that turned `sent` in it, counted per region and
-- prefix of their mark (verifications the guard did not judge have none).
--
-- Legacy migration 27 (issue 18): the fraud guard counts a group's sends once per statement.
-- The per-row trigger of legacy migration 16 upserted the region's and the prefix's minute rows
-- for every verification turning `sent`: two upserts per job on rows every worker shares
-- (0.6-0.8 ms per job with the controls on, `make bench`'s BENCH_STATEMENTS=1). Now that `sent`
-- records are written a group at a time (PhoneStore.sent), a statement trigger with transition
-- tables adds each scope's sends of the whole statement in one upsert per distinct row, in key
-- order. The counts are the same.
CREATE OR REPLACE FUNCTION herald.fraud_guard_sent()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
BEGIN
    INSERT INTO herald.sms_fraud_counts AS c (scope, key, minute, sent, verified)
    SELECT s.scope, s.key, date_trunc('minute', now()), count(*), 0
      FROM sent_after n
      JOIN sent_before o ON o.verification_id = n.verification_id
      JOIN herald.sms_fraud_marks m ON m.verification_id = n.verification_id
      CROSS JOIN LATERAL (VALUES ('region', m.region), ('prefix', m.prefix)) AS s(scope, key)
     WHERE n.state = 'sent' AND o.state IS DISTINCT FROM 'sent'
     GROUP BY s.scope, s.key
     ORDER BY s.scope, s.key
    ON CONFLICT (scope, key, minute) DO UPDATE SET sent = c.sent + EXCLUDED.sent;
    RETURN NULL;
END;
$function$;

CREATE OR REPLACE TRIGGER sms_verifications_fraud_guard_sent AFTER UPDATE ON herald.sms_verifications
    REFERENCING OLD TABLE AS sent_before NEW TABLE AS sent_after
    FOR EACH STATEMENT
    EXECUTE FUNCTION herald.fraud_guard_sent();
