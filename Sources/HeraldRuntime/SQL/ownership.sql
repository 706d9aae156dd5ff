-- The ownership finalizer: the migrator runs it last, after every group's migrations and
-- functions, whenever a migrate changed anything. herald_migrate (legacy migration 12, runtime
-- migrations/0004_database_roles.sql) owns schema herald and everything in it, and the ledger;
-- herald_worker may read the ledger. An object a later migration or function file creates
-- belongs at first to whoever ran it (the migrating user): this hands it over, so a fresh
-- install and a database migrated by the old code end in the same state.
-- Idempotent: it alters only what is not so already; when everything is, it writes nothing and
-- locks nothing. Without the roles (a database that never ran 0004), it does nothing.
DO $$
DECLARE
    migrate oid := to_regrole('herald_migrate');
    worker oid := to_regrole('herald_worker');
    ledger oid := to_regclass('public.herald_schema_ledger');
    r record;
BEGIN
    IF migrate IS NOT NULL THEN
        IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'herald' AND nspowner <> migrate) THEN
            ALTER SCHEMA herald OWNER TO herald_migrate;
        END IF;
        -- Tables, partitioned tables, views, materialized views and foreign tables: their
        -- indexes, and the sequences their columns own, follow them.
        FOR r IN SELECT format('ALTER %s %I.%I OWNER TO herald_migrate',
                               CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                                              WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
                               n.nspname, c.relname) AS command
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = 'herald' AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relowner <> migrate
                  ORDER BY c.relname LOOP
            EXECUTE r.command;
        END LOOP;
        -- Sequences no column owns.
        FOR r IN SELECT format('ALTER SEQUENCE %I.%I OWNER TO herald_migrate', n.nspname, c.relname) AS command
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = 'herald' AND c.relkind = 'S' AND c.relowner <> migrate
                    AND NOT EXISTS (SELECT 1 FROM pg_depend d
                                     WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                                       AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
                  ORDER BY c.relname LOOP
            EXECUTE r.command;
        END LOOP;
        -- Functions, procedures and aggregates.
        FOR r IN SELECT format('ALTER %s %s OWNER TO herald_migrate',
                               CASE p.prokind WHEN 'a' THEN 'AGGREGATE' ELSE 'ROUTINE' END, p.oid::regprocedure) AS command
                   FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                  WHERE n.nspname = 'herald' AND p.proowner <> migrate
                  ORDER BY p.oid LOOP
            EXECUTE r.command;
        END LOOP;
        IF EXISTS (SELECT 1 FROM pg_class WHERE oid = ledger AND relowner <> migrate) THEN
            ALTER TABLE public.herald_schema_ledger OWNER TO herald_migrate;
        END IF;
    END IF;
    IF worker IS NOT NULL AND ledger IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
         WHERE c.oid = ledger AND a.grantee = worker AND a.privilege_type = 'SELECT') THEN
        GRANT SELECT ON public.herald_schema_ledger TO herald_worker;
    END IF;
END
$$;
