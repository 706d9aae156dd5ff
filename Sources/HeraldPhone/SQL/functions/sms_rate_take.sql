-- Legacy migration 14 (its first definition; 29 redefined it):
-- Rate counters are now buckets of a tenth of their window (window_start: the bucket's
-- start; expires_at: the last moment it is counted). Rows of the fixed windows before are
-- read as buckets until they expire: a request is refused a little early, never late.
--
-- Sliding, bounded. A window of W seconds is cut into 10 buckets of b = max(1, W / 10)
-- seconds (one counter row per scope, key and bucket start). A request at time t counts every
-- bucket overlapping (t - W, t], its own included, and passes only when that sum stays within
-- max. So no run of W seconds ever holds more than max requests of one key (a fixed window let
-- 2 x max through across its edge); the price is that a request may be refused up to one bucket
-- (W/10) earlier than an exact sliding log would.
--
-- All or nothing. Every limit of the request is counted in one statement (rows locked in scope
-- and key order) and judged in a second (two statements per job, whatever the number of
-- limits); if any is full, every count is taken back in a third (a refused request uses no
-- quota) and the first full scope, in the request's order, is returned.
--
-- Global. The `global` scope is spread over 16 shard rows (keys `shard-<window>-<n>`) so that it
-- is not one row every worker waits on; its sum reads the other shards as committed when the
-- judging statement starts, so concurrent requests may pass it by at most the number of workers
-- deciding at that instant.
--
-- p_now is the request's time (now(); tests pass their own to cross window edges without
-- waiting). NULL when the request was counted in every limit, else the first full scope
-- (nothing counted).
--
-- Legacy migration 29: every take of one transaction uses one global shard,
-- mod(txid_current(), 16), instead of one drawn per call, so that a transaction that takes the
-- limits of several requests (SMS groups, herald.sms_prepare_batch) can lock its rows in one
-- key order up front.
--
-- Issue 31: each counter is summed by key (equality on both index columns before window_start),
-- and sequential scans are off. With `key = ANY (...)`, the generic plan made on an empty or small
-- table left the key out of the index condition and read every counter of the scope in the
-- window: 1.5-4.2 ms per call once the table held 5,000-10,000 rows, against 0.13-0.16 now,
-- whatever the statistics.
CREATE OR REPLACE FUNCTION herald.sms_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone)
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
               CASE WHEN u.scope = 'global' THEN 'shard-' || u.window_seconds || '-' || mod(txid_current(), 16)::int
                    ELSE u.key END AS key
          FROM unnest(p_scopes, p_keys, p_windows, p_maxes) WITH ORDINALITY AS u(scope, key, window_seconds, max, i)
    ), located AS MATERIALIZED (
        SELECT w.*, to_timestamp(floor(extract(epoch FROM p_now) / w.bucket) * w.bucket) AS bucket_start FROM wanted w
    ), counted AS (
        INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
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
                SELECT sum(e.count) AS n FROM herald.sms_rate_counters e
                 WHERE e.scope = u.scope AND e.key = k.key
                   AND e.window_start > p_now - make_interval(secs => u.window_seconds + u.bucket)
                   AND e.window_start <= p_now
                   AND NOT (e.key = u.key AND e.window_start = u.bucket_start)) e
      ) earlier ON true;
    IF v_refused IS NOT NULL THEN
        UPDATE herald.sms_rate_counters r SET count = r.count - 1
          FROM unnest(v_scopes, v_keys, v_starts) AS u(scope, key, window_start)
         WHERE r.scope = u.scope AND r.key = u.key AND r.window_start = u.window_start;
    END IF;
    RETURN v_refused;
END;
$function$;
