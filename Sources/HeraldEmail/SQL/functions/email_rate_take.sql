-- The email limits (scope email_address, ip, global) over herald.email_rate_counters, counted
-- as herald.sms_rate_take counts the SMS ones (see HeraldPhone's functions/sms_rate_take.sql):
-- buckets of a tenth of their window, every limit in one statement, judged in a second.
-- NULL when the request was counted in every limit, else the first full scope (nothing counted).
-- Its global shard is drawn per call (sms_rate_take's has been the transaction's since legacy 29).
-- Issue 31, as in sms_rate_take: each counter is summed by key (equality on both index columns
-- before window_start), and sequential scans are off, so that the generic plans a pooled
-- connection makes on an empty table stay one index lookup per counter as the table grows.
CREATE OR REPLACE FUNCTION herald.email_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone)
 RETURNS text
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    v_refused text;
    v_scopes text[];
    v_keys text[];
    v_starts timestamptz[];
    v_order bigint[];
    v_counts integer[];
    v_maxes integer[];
    v_windows integer[];
    v_buckets integer[];
BEGIN
    IF coalesce(array_length(p_scopes, 1), 0) = 0 THEN
        RETURN NULL;
    END IF;
    WITH wanted AS MATERIALIZED (
        SELECT u.i, u.scope, u.max, u.window_seconds, greatest(u.window_seconds / 10, 1) AS bucket,
               CASE WHEN u.scope = 'global' THEN 'shard-' || u.window_seconds || '-' || floor(random() * 16)::int
                    ELSE u.key END AS key
          FROM unnest(p_scopes, p_keys, p_windows, p_maxes) WITH ORDINALITY AS u(scope, key, window_seconds, max, i)
    ), located AS MATERIALIZED (
        SELECT w.*, to_timestamp(floor(extract(epoch FROM p_now) / w.bucket) * w.bucket) AS bucket_start FROM wanted w
    ), counted AS (
        INSERT INTO herald.email_rate_counters AS r (scope, key, window_start, count, expires_at)
        SELECT l.scope, l.key, l.bucket_start, 1, l.bucket_start + make_interval(secs => l.bucket + l.window_seconds)
          FROM located l ORDER BY l.scope, l.key
        ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count + 1
        RETURNING r.scope, r.key, r.window_start, r.count
    )
    SELECT array_agg(l.i), array_agg(l.scope), array_agg(l.key), array_agg(l.bucket_start), array_agg(c.count),
           array_agg(l.max), array_agg(l.window_seconds), array_agg(l.bucket)
      INTO v_order, v_scopes, v_keys, v_starts, v_counts, v_maxes, v_windows, v_buckets
      FROM located l
      JOIN counted c ON c.scope = l.scope AND c.key = l.key AND c.window_start = l.bucket_start;
    -- A statement of its own, so that it sees what other requests committed while this one
    -- waited for its rows: the other buckets overlapping (p_now - window, p_now] (for
    -- global, every shard's); this request's own bucket is its returned count.
    SELECT (array_agg(u.scope ORDER BY u.i) FILTER (WHERE u.count + coalesce(earlier.n, 0) > u.max))[1]
      INTO v_refused
      FROM unnest(v_order, v_scopes, v_keys, v_starts, v_counts, v_maxes, v_windows, v_buckets)
           AS u(i, scope, key, bucket_start, count, max, window_seconds, bucket)
      LEFT JOIN LATERAL (
          SELECT sum(e.n) AS n
            FROM unnest(CASE WHEN u.scope = 'global'
                             THEN ARRAY(SELECT 'shard-' || u.window_seconds || '-' || g FROM generate_series(0, 15) g)
                             ELSE ARRAY[u.key] END) AS k(key)
            CROSS JOIN LATERAL (
                SELECT sum(e.count) AS n FROM herald.email_rate_counters e
                 WHERE e.scope = u.scope AND e.key = k.key
                   AND e.window_start > p_now - make_interval(secs => u.window_seconds + u.bucket)
                   AND e.window_start <= p_now
                   AND NOT (e.key = u.key AND e.window_start = u.bucket_start)) e
      ) earlier ON true;
    IF v_refused IS NOT NULL THEN
        UPDATE herald.email_rate_counters r SET count = r.count - 1
          FROM unnest(v_scopes, v_keys, v_starts) AS u(scope, key, window_start)
         WHERE r.scope = u.scope AND r.key = u.key AND r.window_start = u.window_start;
    END IF;
    RETURN v_refused;
END;
$function$;
