-- The job ledger and the event outbox become partitioned by day (UTC) of created_at, so that
-- retention drops a whole day instead of deleting its rows one batch at a time (issue 33).
-- squawk-ignore-file require-lock-timeout, require-statement-timeout, constraint-missing-not-valid, adding-serial-primary-key-field, require-concurrent-index-creation
-- why: require-lock-timeout, require-statement-timeout: the conversion takes each table's ACCESS
--   EXCLUSIVE lock for the attach's scan and the new key's index build (no row is copied); a
--   timeout would only make a large table's migration fail.
-- why: constraint-missing-not-valid, adding-serial-primary-key-field, require-concurrent-index-creation: a new
--   partitioned table's key and indexes (no CONCURRENTLY or NOT VALID there); each one on the
--   legacy partition is built under the lock the conversion holds anyway.
--
-- The move loses nothing and copies nothing: the table as it is, if it has rows, becomes the
-- partition <table>_legacy for every time before tomorrow (UTC), under a new partitioned table
-- of the same name, columns, defaults and checks (an empty one is dropped). A DEFAULT partition takes any row no day's partition
-- covers yet; herald.partitions_ensure (functions/partitions.sql), which every migrate and every
-- cleanup run calls, creates the days ahead and moves rows out of the DEFAULT partition into
-- their day. The legacy partition is dropped like a day once all of it is past retention.

-- Converts herald.<p_table> (which must have p_column timestamptz NOT NULL) as above. The caller
-- then declares the new table's key (built on the legacy partition, whose own primary key goes)
-- and indexes: each one whose definition matches an index of the legacy partition (renamed
-- <table>_legacy_…) takes that index over without building it.
-- A helper of migrations only (a definition file could change under an old migration).
-- plpgsql_check: accept text type variable is not sanitized — the GRANTs' privilege types and the storage settings come from the catalog (aclexplode, reloptions), role names through quote_ident
-- herald:migration-helper
CREATE FUNCTION herald.partition_by_day(p_table regclass, p_column text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_name text;
    v_legacy text;
    v_bound timestamptz := date_trunc('day', now(), 'UTC') + interval '1 day';
    v_rows boolean;
    r record;
BEGIN
    SELECT c.relname::text INTO STRICT v_name
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = p_table AND n.nspname = 'herald' AND c.relkind = 'r';
    v_legacy := v_name || '_legacy';
    -- The table and its indexes take the legacy names, freeing theirs for the new table's.
    EXECUTE format('ALTER TABLE herald.%I RENAME TO %I', v_name, v_legacy);
    FOR r IN SELECT c.relname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = p_table LOOP
        EXECUTE format('ALTER INDEX herald.%I RENAME TO %I', r.relname,
                       CASE WHEN starts_with(r.relname, v_name) THEN v_legacy || substr(r.relname, length(v_name) + 1)
                            ELSE v_legacy || '_' || r.relname END);
    END LOOP;
    -- Its primary key gives way to the new table's, which must hold the partition column too.
    FOR r IN SELECT conname::text FROM pg_constraint WHERE conrelid = p_table AND contype = 'p' LOOP
        EXECUTE format('ALTER TABLE herald.%I DROP CONSTRAINT %I', v_legacy, r.conname);
    END LOOP;
    EXECUTE format('CREATE TABLE herald.%I (LIKE herald.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS)'
                   ' PARTITION BY RANGE (%I)', v_name, v_legacy, p_column);
    -- Owned as the legacy table is (herald_migrate): a sequence belongs only to a table of its owner.
    EXECUTE format('ALTER TABLE herald.%I OWNER TO %I', v_name,
                   (SELECT pg_get_userbyid(c.relowner)::text FROM pg_class c WHERE c.oid = p_table));
    -- A serial column's sequence belongs to the new table: dropping the legacy partition must not take it along.
    FOR r IN SELECT a.attname, pg_get_serial_sequence(format('herald.%I', v_legacy), a.attname)::regclass AS seq
               FROM pg_attribute a WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped LOOP
        CONTINUE WHEN r.seq IS NULL;
        EXECUTE format('ALTER SEQUENCE %s OWNED BY herald.%I.%I', r.seq, v_name, r.attname);
    END LOOP;
    EXECUTE format('CREATE TABLE herald.%I PARTITION OF herald.%I DEFAULT', v_name || '_default', v_name);
    -- The table's grants (LIKE copies none), and its storage settings, which a partitioned table
    -- cannot hold: kept on the DEFAULT partition, whence herald.partitions_ensure gives each day them.
    FOR r IN SELECT a.privilege_type, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)::text) END AS grantee
               FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) AS a
              WHERE c.oid = p_table AND a.grantee <> c.relowner LOOP
        EXECUTE format('GRANT %s ON herald.%I TO %s', r.privilege_type, v_name, r.grantee);
    END LOOP;
    FOR r IN SELECT unnest(c.reloptions) AS option FROM pg_class c WHERE c.oid = p_table LOOP
        EXECUTE format('ALTER TABLE herald.%I SET (%s)', v_name || '_default', r.option);
    END LOOP;
    -- An empty table (a new install) leaves no legacy partition behind.
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM herald.%I)', v_legacy) INTO v_rows;
    IF v_rows THEN
        EXECUTE format('ALTER TABLE herald.%I ATTACH PARTITION herald.%I FOR VALUES FROM (MINVALUE) TO (%L)',
                       v_name, v_legacy, v_bound);
    ELSE
        EXECUTE format('DROP TABLE herald.%I', v_legacy);
    END IF;
END
$function$;

SELECT herald.partition_by_day('herald.job_runs', 'created_at');
-- A message id is one row: herald.job_claim keeps it so across days (an advisory lock per id).
ALTER TABLE herald.job_runs ADD PRIMARY KEY (message_id, created_at);
CREATE INDEX job_runs_finished_idx ON herald.job_runs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX job_runs_status_idx ON herald.job_runs (queue, status);
-- The unfinished jobs of a day about to be dropped, which move on to the current day instead.
CREATE INDEX job_runs_open_idx ON herald.job_runs (created_at) WHERE status IN ('running', 'retrying');

SELECT herald.partition_by_day('herald.event_outbox', 'created_at');
ALTER TABLE herald.event_outbox ADD PRIMARY KEY (id, created_at);
CREATE INDEX event_outbox_exchange_idx ON herald.event_outbox (exchange, id);
