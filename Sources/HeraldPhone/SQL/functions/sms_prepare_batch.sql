-- Decides a claim group's SMS jobs in one call (legacy migration 23, issue 18).
--
-- Most requests are a first request for a number and purpose with nothing pending, no lock and
-- no earlier row: those are decided together, set-based: one statement finds them, one counts
-- every rate limit of the whole group (one upsert per distinct counter, in key order, so two
-- groups never deadlock on counters), one judges the counts, one inserts their codes and
-- verifications. Any other request (a retry, a test number, a pending code to reuse or resend,
-- a locked number, a number twice in the group) goes through herald.sms_prepare on its own in
-- the same transaction, exactly as before.
--
-- The limits hold as they did one by one: a request at place k (in the group's order) among the
-- group's m requests on a counter counts as that counter's total - m + k. If any request of the
-- group would be refused, the group's counts are taken back and all its requests go one by one
-- (a refused request uses no quota, and the first full scope is the reason), so a group decides
-- exactly what the requests decided alone in that order. The global limit's shard is chosen
-- once per group.
--
-- Legacy migration 28: it judges each counter once. PostgreSQL inlined the judging statement's
-- `counter` into its join with the group's limits, so it summed a counter's other buckets once
-- per request on it: the global counter (16 shards x 10 buckets) once per request of the group.
-- Materialized, each distinct counter is summed once. The decisions are the same.
--
-- Legacy migration 29: a group locks every counter it may take in one key order, before it
-- counts. Before, a group whose fast requests had counted (rows locked in key order) then
-- decided its other requests one by one, and each of those took its counters after the
-- group's, with a global shard of its own: a group that held counter A could wait for B while
-- another held B and waited for A. PostgreSQL broke each such deadlock after deadlock_timeout
-- (1 s), and the group was decided again. `make bench` met it with two herald-sms processes and
-- the abuse controls on (every job takes the same region caps): 115 deadlocks in one run,
-- 83 jobs/s instead of about 2,000.
--
-- Now a group with requests to decide one by one first locks, in one sorted upsert that counts
-- nothing, the counters of all of them and of its fast requests; and every take of one
-- transaction uses one global shard (mod(txid_current(), 16)), in herald.sms_rate_take as in the
-- group's own count. So every transaction of herald.sms_prepare_batch takes its counters before
-- any code row, and in one key order. The decisions are the same.
--
-- That first statement: the requests to decide one by one that may take counters (not a test
-- number, no verification yet: a retry takes none) and, when there are any, every counter of
-- those and of the fast requests locked in key order. The lock is an upsert that writes nothing
-- to an existing row (DO UPDATE ... WHERE false still locks it); a row it has to create holds 0
-- and expires as a counted one does. A `resend` counter is locked only for a request that
-- forces a resend: herald.sms_prepare takes it for no other (and the fast path never).
--
-- Issue 31: its plans stand an empty table. A pooled connection plans each statement once
-- (generic plans) and keeps the plans until a table they read is analyzed, so the first jobs of a
-- fresh deployment plan on empty tables, and those plans last while the tables grow. Three kinds
-- of statement then read a whole table or index for each request. The pending-code check, an
-- anti-join, scanned every pending code. The counter sums read every counter of a scope in the
-- window: `key = ANY (...)` was left out of the index condition, which was cheaper on an empty
-- table. On a table analyzed while (nearly) empty, every lookup became a sequential scan. Over the
-- first 10,000 jobs that cost 2-3.7 ms of PostgreSQL CPU per job, against 0.22-0.25 warm. Now:
--   - each lookup is a correlated subquery (OFFSET 0 keeps it one): one index lookup per request;
--   - each counter is summed by key, with equality on both index columns before window_start;
--   - sequential scans are off in the function, since every table here is read by key.
-- Measured the same way: 0.24-0.32 ms per job cold, whether the tables were never analyzed,
-- analyzed empty or analyzed at a few hundred rows. Warm is unchanged.
--
-- Migration 16 (sms): each request's tenant (p_tenants, NULL or '' for none: a previous version's
-- call) goes with its code. The fast path still wants no pending code of the number and purpose
-- in any tenant and each number and purpose once in the group (only the first send of a number
-- goes fast); any other request is decided by herald.sms_prepare with its tenant.
--
-- Migration 17 (sms, issue 46): p_max_paid_sends, the budget of a code's paid sends, goes to
-- herald.sms_prepare (a request with a pending code is never on the fast path).
CREATE OR REPLACE FUNCTION herald.sms_prepare_batch(p_ids text[], p_message_ids text[], p_phones text[], p_purposes text[], p_forces boolean[], p_tests boolean[], p_key_ids text[], p_hashes bytea[], p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer, p_tenants text[] DEFAULT NULL, p_max_paid_sends integer DEFAULT NULL)
 RETURNS TABLE(o_i integer, o_decision text, o_reason text, o_uncertain boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    v_now timestamptz := now();
    v_shard integer := mod(txid_current(), 16)::int;
    fast integer[];
    slow integer[] := '{}'::integer[];
    c_scopes text[];
    c_keys text[];
    c_starts timestamptz[];
    c_totals integer[];
    c_taken integer[];
    c_windows integer[];
    c_buckets integer[];
    full_counter boolean;
    made bigint;
    d record;
BEGIN
    -- The fast requests: a first request (no row yet) for a real number and purpose with
    -- no pending code and no guessing lock of its number, its number and purpose and its id once in the group.
    SELECT coalesce(array_agg(r.i::integer ORDER BY r.i), '{}') INTO fast
      FROM unnest(p_ids, p_phones, p_purposes, p_tests) WITH ORDINALITY AS r(id, phone, purpose, test, i)
     WHERE NOT r.test
       AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v WHERE v.verification_id = r.id OFFSET 0)
       AND NOT EXISTS (SELECT 1 FROM herald.sms_codes c
                        WHERE c.phone_number = r.phone AND c.purpose = r.purpose AND c.status = 'pending' OFFSET 0)
       AND NOT EXISTS (SELECT 1 FROM herald.sms_guess_failures g
                        WHERE g.phone_number = r.phone AND g.locked_until > v_now OFFSET 0)
       AND (SELECT count(*) FROM unnest(p_ids, p_phones, p_purposes) AS o(id, phone, purpose)
             WHERE o.id = r.id OR (o.phone = r.phone AND o.purpose = r.purpose)) = 1;

    IF cardinality(fast) < cardinality(p_ids) THEN
        SELECT coalesce(array_agg(r.i::integer ORDER BY r.i), '{}') INTO slow
          FROM unnest(p_ids, p_tests) WITH ORDINALITY AS r(id, test, i)
         WHERE NOT r.test AND r.i <> ALL (fast)
           AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v WHERE v.verification_id = r.id);
    END IF;
    IF cardinality(slow) > 0 THEN
        WITH wanted AS (
            SELECT l.scope,
                   CASE WHEN l.scope = 'global' THEN 'shard-' || l.window_seconds || '-' || v_shard ELSE l.key END AS key,
                   l.window_seconds, greatest(l.window_seconds / 10, 1) AS bucket
              FROM unnest(p_limit_requests, p_scopes, p_keys, p_windows) AS l(req, scope, key, window_seconds)
             WHERE (l.req = ANY (slow) OR l.req = ANY (fast)) AND (l.scope <> 'resend' OR p_forces[l.req])
        ), located AS (
            SELECT w.scope, w.key, to_timestamp(floor(extract(epoch FROM v_now) / w.bucket) * w.bucket) AS bucket_start,
                   max(w.bucket + w.window_seconds) AS lasts
              FROM wanted w GROUP BY 1, 2, 3
        )
        INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
        SELECT l.scope, l.key, l.bucket_start, 0, l.bucket_start + make_interval(secs => l.lasts)
          FROM located l ORDER BY l.scope, l.key, l.bucket_start
        ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count WHERE false;
    END IF;
    IF cardinality(fast) > 0 THEN
        -- Every counter of the group once, in key order, by how many requests take it.
        WITH wanted AS (
            SELECT l.scope, l.key, l.bucket_start, max(l.window_seconds) AS window_seconds, max(l.bucket) AS bucket, count(*)::int AS n
              FROM herald.sms_batch_limits(fast, p_limit_requests, p_scopes, p_keys, p_windows, p_maxes, v_now, v_shard) l
             GROUP BY l.scope, l.key, l.bucket_start
        ), counted AS (
            INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
            SELECT w.scope, w.key, w.bucket_start, w.n, w.bucket_start + make_interval(secs => w.bucket + w.window_seconds)
              FROM wanted w ORDER BY w.scope, w.key, w.bucket_start
            ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count + EXCLUDED.count
            RETURNING r.scope, r.key, r.window_start, r.count
        )
        SELECT array_agg(w.scope), array_agg(w.key), array_agg(w.bucket_start), array_agg(c.count), array_agg(w.n),
               array_agg(w.window_seconds), array_agg(w.bucket)
          INTO c_scopes, c_keys, c_starts, c_totals, c_taken, c_windows, c_buckets
          FROM wanted w JOIN counted c ON c.scope = w.scope AND c.key = w.key AND c.window_start = w.bucket_start;

        -- Judged in a statement of its own, which sees what other groups committed while
        -- this one waited for its rows: each request's place on each of its counters,
        -- plus the other buckets of the window (for global, every shard's).
        WITH counter AS MATERIALIZED (
            SELECT u.*, (SELECT coalesce(sum(e.n), 0)
                           FROM unnest(CASE WHEN u.scope = 'global'
                                            THEN ARRAY(SELECT 'shard-' || u.window_seconds || '-' || g FROM generate_series(0, 15) g)
                                            ELSE ARRAY[u.key] END) AS k(key)
                           CROSS JOIN LATERAL (
                               SELECT sum(e.count) AS n FROM herald.sms_rate_counters e
                                WHERE e.scope = u.scope AND e.key = k.key
                                  AND e.window_start > v_now - make_interval(secs => u.window_seconds + u.bucket)
                                  AND e.window_start <= v_now
                                  AND NOT (e.key = u.key AND e.window_start = u.bucket_start)) e) AS earlier
              FROM unnest(c_scopes, c_keys, c_starts, c_totals, c_taken, c_windows, c_buckets)
                   AS u(scope, key, bucket_start, total, taken, window_seconds, bucket)
        ), placed AS (
            SELECT l.max, c.total - c.taken + rank() OVER (PARTITION BY l.scope, l.key, l.bucket_start ORDER BY l.req) + c.earlier AS count
              FROM herald.sms_batch_limits(fast, p_limit_requests, p_scopes, p_keys, p_windows, p_maxes, v_now, v_shard) l
              JOIN counter c ON c.scope = l.scope AND c.key = l.key AND c.bucket_start = l.bucket_start
        )
        SELECT coalesce(bool_or(p.count > p.max), false) INTO full_counter FROM placed p;

        IF full_counter THEN
            -- Someone in the group would be refused: take the counts back and decide
            -- each request alone, in order, below.
            UPDATE herald.sms_rate_counters r SET count = r.count - u.taken
              FROM unnest(c_scopes, c_keys, c_starts, c_taken) AS u(scope, key, window_start, taken)
             WHERE r.scope = u.scope AND r.key = u.key AND r.window_start = u.window_start;
            fast := '{}';
        ELSE
            WITH code AS (
                INSERT INTO herald.sms_codes (phone_number, purpose, tenant, status, key_id, code_hash, max_attempts, test_number, expires_at,
                                              last_sent_at, sends, guess_limit, guess_window_seconds, lockout_seconds, lockout_max_seconds)
                SELECT p_phones[f.i], p_purposes[f.i], coalesce(p_tenants[f.i], ''), 'pending', p_key_ids[f.i], p_hashes[f.i], p_max_attempts, false,
                       v_now + make_interval(secs => p_ttl_seconds), v_now, 1,
                       p_guess_limit, p_guess_window_seconds, p_lockout_seconds, p_lockout_max_seconds
                  FROM unnest(fast) AS f(i) ORDER BY p_phones[f.i], p_purposes[f.i]
                ON CONFLICT (phone_number, purpose, tenant) WHERE status = 'pending' DO NOTHING
                RETURNING id, phone_number, purpose
            ), verification AS (
                INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends, owner_key)
                SELECT p_ids[f.i], code.id, code.phone_number, code.purpose, p_message_ids[f.i], 'sending', 1, p_owner_key
                  FROM unnest(fast) AS f(i)
                  JOIN code ON code.phone_number = p_phones[f.i] AND code.purpose = p_purposes[f.i]
                RETURNING 1
            )
            SELECT count(*) INTO made FROM verification;
            IF made < cardinality(fast) THEN
                -- A concurrent request created a pending code meanwhile: decide the group again.
                RAISE EXCEPTION 'a concurrent request created a pending code; try again' USING ERRCODE = '40001';
            END IF;
            RETURN QUERY SELECT f.i, 'send'::text, NULL::text, false FROM unnest(fast) AS f(i);
        END IF;
    END IF;

    -- Every other request, alone, as herald.sms_prepare decides it.
    FOR i IN 1 .. coalesce(cardinality(p_ids), 0) LOOP
        CONTINUE WHEN i = ANY (fast);
        SELECT * INTO d FROM herald.sms_prepare(
            p_ids[i], p_message_ids[i], p_phones[i], p_purposes[i], p_forces[i], p_tests[i], p_key_ids[i], p_hashes[i],
            p_ttl_seconds, p_max_attempts, p_resend_interval_seconds,
            ARRAY(SELECT u.s FROM unnest(p_limit_requests, p_scopes) WITH ORDINALITY AS u(r, s, o) WHERE u.r = i ORDER BY u.o),
            ARRAY(SELECT u.k FROM unnest(p_limit_requests, p_keys) WITH ORDINALITY AS u(r, k, o) WHERE u.r = i ORDER BY u.o),
            ARRAY(SELECT u.w FROM unnest(p_limit_requests, p_windows) WITH ORDINALITY AS u(r, w, o) WHERE u.r = i ORDER BY u.o),
            ARRAY(SELECT u.m FROM unnest(p_limit_requests, p_maxes) WITH ORDINALITY AS u(r, m, o) WHERE u.r = i ORDER BY u.o),
            p_owner_key, p_guess_limit, p_guess_window_seconds, p_lockout_seconds, p_lockout_max_seconds, coalesce(p_tenants[i], ''),
            p_max_paid_sends);
        o_i := i;
        o_decision := d.o_decision;
        o_reason := d.o_reason;
        o_uncertain := d.o_uncertain;
        RETURN NEXT;
    END LOOP;
END;
$function$;
