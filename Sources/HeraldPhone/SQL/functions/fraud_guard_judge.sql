-- Judges a group of requests, the jobs herald-sms has in flight together (FraudGuardJudge):
-- herald.fraud_guard_check for each, in order. A row for each request the guard refuses, o_index
-- its place in the arrays (from 1); no row: it went ahead (or was judged before).
--
-- Issue 48: the marks this group makes are added to the let-through count
-- (herald.sms_fraud_let_through) once, at the group's end: one upsert per scope and minute,
-- regions before prefixes and each in key order, as every writer of that table locks its rows.
-- Until then each request is judged with the group's earlier marks counted from the group itself
-- (fraud_guard_check's p_pending_region and p_pending_prefix), as the count would have held them.
-- Added mark by mark (the marks' trigger, herald.fraud_guard_let_through_marked), a busy region's
-- minute row, which every worker's group writes, was held by one group from its first request to
-- its commit: the other waited for it about a third of its time (0.73 ms a call in
-- pg_stat_statements, every bench request in one region).
-- herald.fraud_guard_group is 'on' while this runs: the trigger leaves the marks this transaction
-- makes (created_at = now(), the transaction's start) to the group. A mark rewritten for other
-- scopes (a redelivered job whose verification is not written yet) was made before: the trigger
-- moves it at once, as outside a group.
CREATE OR REPLACE FUNCTION herald.fraud_guard_judge(p_verification_ids text[], p_phones text[], p_regions text[], p_prefixes text[], p_known_hashes text[], p_again boolean[], p_proven boolean[],
                                                  p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer,
                                                  p_max_pause_seconds integer, p_grace_seconds integer, p_max_undelivered double precision, p_usual_multiple double precision)
 RETURNS TABLE(o_index bigint, o_scope text, o_key text, o_new boolean, o_sent bigint, o_verified bigint, o_until timestamp with time zone, o_seconds integer, o_undelivered bigint)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET herald.fraud_guard_group TO 'on'
AS $function$
DECLARE
    -- The verifications this group marked, and their count per region ('r' || key) and prefix ('p' || key).
    marked text[] := '{}'::text[];
    pending jsonb := '{}'::jsonb;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_verification_ids), 0) LOOP
        RETURN QUERY
            SELECT i::bigint, f.*
              FROM herald.fraud_guard_check(p_verification_ids[i], p_phones[i], p_regions[i], p_prefixes[i], p_window_minutes, p_region_floor,
                                            p_prefix_floor, p_min_conversion, p_pause_seconds, p_max_pause_seconds, p_grace_seconds,
                                            p_known_hashes[i], p_max_undelivered, p_again[i], p_proven[i], p_usual_multiple,
                                            coalesce((pending ->> ('r' || p_regions[i]))::bigint, 0),
                                            coalesce((pending ->> ('p' || p_prefixes[i]))::bigint, 0)) f;
        IF NOT FOUND AND NOT p_again[i] AND p_verification_ids[i] <> ALL (marked)
           AND EXISTS (SELECT 1 FROM herald.sms_fraud_marks WHERE verification_id = p_verification_ids[i] AND created_at = now()) THEN
            marked := marked || p_verification_ids[i];
            pending := pending || jsonb_build_object('r' || p_regions[i], coalesce((pending ->> ('r' || p_regions[i]))::bigint, 0) + 1,
                                                     'p' || p_prefixes[i], coalesce((pending ->> ('p' || p_prefixes[i]))::bigint, 0) + 1);
        END IF;
    END LOOP;
    -- The group's marks, as they stand (a verification already reused, refused or failed is not
    -- counted, as the trigger would not count it), into their minutes.
    INSERT INTO herald.sms_fraud_let_through AS c (scope, key, minute, let_through)
    SELECT s.scope, s.key, date_trunc('minute', m.created_at), count(*)
      FROM herald.sms_fraud_marks m
     CROSS JOIN LATERAL (VALUES ('region', m.region), ('prefix', m.prefix)) AS s(scope, key)
     WHERE m.verification_id = ANY(marked) AND m.created_at = now()
       AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v
                        WHERE v.verification_id = m.verification_id AND v.state IN ('reused', 'refused', 'failed'))
     GROUP BY 1, 2, 3
     ORDER BY s.scope = 'prefix', s.key, 3
    ON CONFLICT (scope, key, minute) DO UPDATE SET let_through = c.let_through + EXCLUDED.let_through;
END;
$function$;
