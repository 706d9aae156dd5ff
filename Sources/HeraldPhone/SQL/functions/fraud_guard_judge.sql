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
-- The scopes' windows (herald.fraud_guard_activity: herald.sms_fraud_counts and the let-through
-- count) are read once, at the group's start, for every scope of the group, and passed to each
-- check (p_window): the group is judged against the windows as they stood then, plus its own
-- marks. Whether a verification was judged before, and marked before, is read once too: a
-- request the check lets through, not again and not judged before, was marked (the check's only
-- other way to return nothing), its mark new unless it was marked before. A mark made before and rewritten here for other scopes (the
-- numbering plan's prefixes changed between two deliveries of one job) moves at once through the
-- trigger, which the windows read at the start do not see: the rest of the group counts it where
-- it was.
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
    -- Each scope of the group, 'r' || region and 'p' || prefix, and in the same places its window
    -- (sends, verifications and undelivered receipts counted; let through) and the marks this
    -- group made in it (pending).
    scope_keys text[];
    w_sent bigint[];
    w_verified bigint[];
    w_undelivered bigint[];
    w_let_through bigint[];
    pending bigint[];
    -- The verifications judged before this group, those marked before it (a redelivered job
    -- whose verification is not written yet: the trigger counted its mark when it was made), and
    -- those it marked.
    judged text[];
    marked_before text[];
    marked text[] := '{}'::text[];
    r integer;
    p integer;
BEGIN
    IF coalesce(cardinality(p_verification_ids), 0) = 0 THEN
        RETURN;
    END IF;
    SELECT coalesce(array_agg(s.scope_key ORDER BY s.scope_key), '{}'), array_agg(w.sent ORDER BY s.scope_key),
           array_agg(w.verified ORDER BY s.scope_key), array_agg(w.undelivered ORDER BY s.scope_key),
           array_agg(w.let_through ORDER BY s.scope_key), array_agg(0::bigint ORDER BY s.scope_key)
      INTO scope_keys, w_sent, w_verified, w_undelivered, w_let_through, pending
      FROM (SELECT DISTINCT 'region' AS scope, g.region AS key, 'r' || g.region AS scope_key FROM unnest(p_regions) AS g(region) WHERE p_region_floor > 0
            UNION
            SELECT DISTINCT 'prefix', g.prefix, 'p' || g.prefix FROM unnest(p_prefixes) AS g(prefix) WHERE p_prefix_floor > 0) AS s
     CROSS JOIN LATERAL herald.fraud_guard_activity(s.scope, s.key, p_window_minutes) AS w;
    SELECT coalesce(array_agg(v.verification_id), '{}') INTO judged
      FROM herald.sms_verifications v WHERE v.verification_id = ANY(p_verification_ids);
    SELECT coalesce(array_agg(m.verification_id), '{}') INTO marked_before
      FROM herald.sms_fraud_marks m WHERE m.verification_id = ANY(p_verification_ids);
    FOR i IN 1 .. cardinality(p_verification_ids) LOOP
        r := array_position(scope_keys, 'r' || p_regions[i]);
        p := array_position(scope_keys, 'p' || p_prefixes[i]);
        RETURN QUERY
            SELECT i::bigint, f.*
              FROM herald.fraud_guard_check(p_verification_ids[i], p_phones[i], p_regions[i], p_prefixes[i], p_window_minutes, p_region_floor,
                                            p_prefix_floor, p_min_conversion, p_pause_seconds, p_max_pause_seconds, p_grace_seconds,
                                            p_known_hashes[i], p_max_undelivered, p_again[i], p_proven[i], p_usual_multiple,
                                            coalesce(pending[r], 0), coalesce(pending[p], 0),
                                            ARRAY[coalesce(w_sent[r], 0), coalesce(w_verified[r], 0), coalesce(w_undelivered[r], 0), coalesce(w_let_through[r], 0),
                                                  coalesce(w_sent[p], 0), coalesce(w_verified[p], 0), coalesce(w_undelivered[p], 0), coalesce(w_let_through[p], 0)]) f;
        IF NOT FOUND AND NOT p_again[i] AND p_verification_ids[i] <> ALL (judged) AND p_verification_ids[i] <> ALL (marked_before)
           AND p_verification_ids[i] <> ALL (marked) THEN
            marked := marked || p_verification_ids[i];
            IF r IS NOT NULL THEN
                pending[r] := pending[r] + 1;
            END IF;
            IF p IS NOT NULL THEN
                pending[p] := pending[p] + 1;
            END IF;
        END IF;
    END LOOP;
    -- The group's marks, as they stand (a verification already reused, refused or failed is not
    -- counted, as the trigger would not count it), into their minutes: the marks of its requests
    -- this transaction made and the trigger left to it, read again rather than taken from
    -- `marked`, which another worker's commit during the group (a redelivered job judged twice at
    -- once) can make count one too many, or one too few.
    INSERT INTO herald.sms_fraud_let_through AS c (scope, key, minute, let_through)
    SELECT s.scope, s.key, date_trunc('minute', m.created_at), count(*)
      FROM herald.sms_fraud_marks m
     CROSS JOIN LATERAL (VALUES ('region', m.region), ('prefix', m.prefix)) AS s(scope, key)
     WHERE m.verification_id = ANY(p_verification_ids) AND m.verification_id <> ALL (marked_before) AND m.created_at = now()
       AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v
                        WHERE v.verification_id = m.verification_id AND v.state IN ('reused', 'refused', 'failed'))
     GROUP BY 1, 2, 3
     ORDER BY s.scope = 'prefix', s.key, 3
    ON CONFLICT (scope, key, minute) DO UPDATE SET let_through = c.let_through + EXCLUDED.let_through;
END;
$function$;
