-- Upkeep of Herald's tables partitioned by day (UTC): the job ledger and event outbox
-- (migrations/0007_daily_partitions.sql) and the channels' attempt logs. Each has a partition
-- per day, named <table>_pYYYYMMDD, the partition <table>_legacy holding everything before
-- its conversion, and a DEFAULT partition for rows no day covers yet (normally empty).
-- `heraldctl migrate` and every cleanup run call herald.partitions_ensure_all; cleanup drops the
-- days past a table's retention with herald.partitions_drop. The worker role calls them, so
-- they run as their owner (herald_migrate), on schema herald's partitioned tables only.

-- Each partition of p_table with its range; lower_bound NULL for MINVALUE.
CREATE OR REPLACE FUNCTION herald.partition_bounds(p_table regclass)
 RETURNS TABLE (partition regclass, lower_bound timestamptz, upper_bound timestamptz, is_default boolean)
 LANGUAGE sql
 STABLE
 SET "TimeZone" TO 'UTC'
AS $function$
    SELECT c.oid::regclass,
           substring(b.expr FROM 'FROM \(''([^'']*)''\)')::timestamptz,
           substring(b.expr FROM 'TO \(''([^'']*)''\)')::timestamptz,
           b.expr = 'DEFAULT'
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
     CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS expr) AS b
     WHERE i.inhparent = p_table
$function$;

-- The partitions of p_table a drop before p_before takes: each whose whole range ends at or
-- before p_before and before today (the legacy partition too, never the DEFAULT one).
-- herald.partitions_drop drops them; cleanup's dry run counts their rows.
CREATE OR REPLACE FUNCTION herald.partitions_due(p_table regclass, p_before timestamptz)
 RETURNS TABLE (partition regclass, lower_bound timestamptz, upper_bound timestamptz)
 LANGUAGE sql
 STABLE
 SET "TimeZone" TO 'UTC'
AS $function$
    SELECT b.partition, b.lower_bound, b.upper_bound FROM herald.partition_bounds(p_table) AS b
     WHERE NOT b.is_default AND b.upper_bound <= least(p_before, date_trunc('day', now(), 'UTC'))
$function$;

-- The column p_table is partitioned by, after checking it is one of these tables.
CREATE OR REPLACE FUNCTION herald.partition_column(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    v_column text;
BEGIN
    SELECT a.attname::text INTO v_column
      FROM pg_partitioned_table p
      JOIN pg_class c ON c.oid = p.partrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
      JOIN pg_type t ON t.oid = a.atttypid
     WHERE p.partrelid = p_table AND n.nspname = 'herald' AND p.partstrat = 'r' AND p.partnatts = 1
       AND t.typname = 'timestamptz';
    IF v_column IS NULL THEN
        RAISE EXCEPTION '% is not a table of schema herald partitioned by day', p_table USING ERRCODE = '22023';
    END IF;
    RETURN v_column;
END
$function$;

-- Creates the partitions of p_table's days from today through p_days_ahead days ahead (0 to
-- 31), and of each day that has rows waiting in its DEFAULT partition (moving them in); answers
-- how many it created. With nothing to do (the usual case) it locks nothing. Otherwise it first
-- takes the DEFAULT partition's lock, which ATTACH takes anyway: no row lands there between
-- reading its days and the attach, and no statement inside it waits on a row this moves. It
-- waits at most 1 s for that lock (statements in flight on the table, which it holds up
-- meanwhile), then fails with lock_not_available: the next cleanup run or migrate does it.
CREATE OR REPLACE FUNCTION herald.partitions_ensure(p_table regclass, p_days_ahead integer DEFAULT 7)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET "TimeZone" TO 'UTC'
 SET lock_timeout TO '1s'
AS $function$
DECLARE
    v_column text := herald.partition_column(p_table);
    v_name text := (SELECT c.relname::text FROM pg_class c WHERE c.oid = p_table);
    v_default regclass;
    v_options text[];
    v_any boolean := false;
    v_waiting timestamptz[] := ARRAY[]::timestamptz[];
    v_missing timestamptz[];
    v_day timestamptz;
    v_part text;
    v_made integer := 0;
BEGIN
    IF p_days_ahead IS NULL OR p_days_ahead NOT BETWEEN 0 AND 31 THEN
        RAISE EXCEPTION 'p_days_ahead must be 0 to 31, got %', p_days_ahead USING ERRCODE = '22023';
    END IF;
    -- One upkeep of a table at a time (two cleanup runs, or a run and a migrate).
    PERFORM pg_advisory_xact_lock(19027, p_table::oid::integer);
    SELECT b.partition INTO v_default FROM herald.partition_bounds(p_table) AS b WHERE b.is_default;
    IF v_default IS NOT NULL THEN
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s)', v_default) INTO v_any;
    END IF;
    -- Today and the days ahead no partition covers (only this function, under the lock above,
    -- creates partitions). A day with rows waiting in DEFAULT is never covered: such a row would
    -- have gone to its day's partition.
    SELECT coalesce(array_agg(d), ARRAY[]::timestamptz[]) INTO v_missing
      FROM generate_series(date_trunc('day', now(), 'UTC'),
                           date_trunc('day', now(), 'UTC') + make_interval(days => p_days_ahead), interval '1 day') AS d
     WHERE NOT EXISTS (SELECT 1 FROM herald.partition_bounds(p_table) AS b
                        WHERE NOT b.is_default AND coalesce(b.lower_bound <= d, true) AND b.upper_bound > d);
    IF NOT v_any AND cardinality(v_missing) = 0 THEN
        RETURN 0;
    END IF;
    IF v_default IS NOT NULL THEN
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', v_default);
        EXECUTE format('SELECT coalesce(array_agg(DISTINCT date_trunc(''day'', %I, ''UTC'')), ARRAY[]::timestamptz[]) FROM %s',
                       v_column, v_default) INTO v_waiting;
        -- The table's storage settings (a partitioned table holds none): each day gets them.
        v_options := (SELECT c.reloptions FROM pg_class c WHERE c.oid = v_default);
    END IF;
    FOR v_day IN SELECT d FROM unnest(v_waiting) AS d UNION SELECT d FROM unnest(v_missing) AS d ORDER BY 1 LOOP
        v_part := format('%s_p%s', v_name, to_char(v_day, 'YYYYMMDD'));
        EXECUTE format('CREATE TABLE herald.%I (LIKE herald.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', v_part, v_name);
        IF v_options IS NOT NULL THEN
            EXECUTE format('ALTER TABLE herald.%I SET (%s)', v_part, array_to_string(v_options, ', '));
        END IF;
        IF v_day = ANY (v_waiting) THEN
            EXECUTE format('WITH moved AS (DELETE FROM %s WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO herald.%I SELECT * FROM moved',
                           v_default, v_column, v_column, v_part) USING v_day, v_day + interval '1 day';
        END IF;
        EXECUTE format('ALTER TABLE herald.%I ATTACH PARTITION herald.%I FOR VALUES FROM (%L) TO (%L)',
                       v_name, v_part, v_day, v_day + interval '1 day');
        v_made := v_made + 1;
    END LOOP;
    RETURN v_made;
END
$function$;

-- herald.partitions_ensure for every day-partitioned table of schema herald, each in a
-- subtransaction of its own: one that cannot have its lock now is left (a warning) to the next
-- call, and the others are done.
CREATE OR REPLACE FUNCTION herald.partitions_ensure_all(p_days_ahead integer DEFAULT 7)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_made integer := 0;
    r record;
BEGIN
    FOR r IN SELECT p.partrelid::regclass AS part
               FROM pg_partitioned_table p
               JOIN pg_class c ON c.oid = p.partrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'herald'
              ORDER BY c.relname LOOP
        BEGIN
            v_made := v_made + herald.partitions_ensure(r.part, p_days_ahead);
        EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
            RAISE WARNING 'partition upkeep of % left to the next call: %', r.part, SQLERRM;
        END;
    END LOOP;
    RETURN v_made;
END
$function$;

-- Drops each partition of p_table herald.partitions_due names: one catalog change per day,
-- whatever its rows. The
-- ledger's jobs not finished yet (running, retrying) move on to the current day first: their
-- row is what runs them at most once. Answers each partition dropped, PostgreSQL's estimate of
-- its rows (its statistics; counted when it has none: counting a day of a busy table would read
-- all of it) and the rows moved. Waits at most 1 s for the table's lock (it waits for the
-- statements in flight on it, and holds the next ones meanwhile), then fails with
-- lock_not_available: the next cleanup run tries again.
CREATE OR REPLACE FUNCTION herald.partitions_drop(p_table regclass, p_before timestamptz)
 RETURNS TABLE (partition text, estimated_rows bigint, moved_rows bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET "TimeZone" TO 'UTC'
 SET lock_timeout TO '1s'
AS $function$
DECLARE
    r record;
BEGIN
    PERFORM herald.partition_column(p_table);
    PERFORM pg_advisory_xact_lock(19027, p_table::oid::integer);
    FOR r IN SELECT d.partition AS part, d.lower_bound, d.upper_bound FROM herald.partitions_due(p_table, p_before) AS d
              ORDER BY d.upper_bound LOOP
        -- The lock DROP TABLE takes, taken before the ledger's rows move: a claim waiting for a
        -- moved row while holding the table against the DROP would be a deadlock.
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', p_table);
        moved_rows := 0;
        IF p_table = 'herald.job_runs'::regclass THEN
            UPDATE herald.job_runs AS j SET created_at = now()
             WHERE j.created_at < r.upper_bound AND j.created_at >= coalesce(r.lower_bound, '-infinity')
               AND j.status IN ('running', 'retrying');
            GET DIAGNOSTICS moved_rows = ROW_COUNT;
        END IF;
        partition := r.part::text;
        -- The statistics' live rows (inserts less deletes, as of the last commit: this
        -- transaction's moves are not in them yet); a day the statistics never saw written, as of
        -- its last ANALYZE; never analyzed either (new or small), counted.
        SELECT CASE WHEN pg_stat_get_tuples_inserted(c.oid) > 0 THEN greatest(pg_stat_get_live_tuples(c.oid) - moved_rows, 0)
                    WHEN c.reltuples >= 0 THEN greatest(c.reltuples::bigint - moved_rows, 0) END
          INTO estimated_rows FROM pg_class c WHERE c.oid = r.part;
        IF estimated_rows IS NULL THEN
            EXECUTE format('SELECT count(*) FROM %s', r.part) INTO estimated_rows;
        END IF;
        EXECUTE format('DROP TABLE %s', r.part);
        RETURN NEXT;
    END LOOP;
END
$function$;

REVOKE ALL ON FUNCTION herald.partitions_ensure(regclass, integer), herald.partitions_ensure_all(integer),
                       herald.partitions_drop(regclass, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION herald.partitions_ensure(regclass, integer), herald.partitions_ensure_all(integer),
                          herald.partitions_drop(regclass, timestamptz) TO herald_worker;
