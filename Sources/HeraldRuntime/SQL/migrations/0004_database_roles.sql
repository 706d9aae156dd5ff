-- herald:legacy-version 12
-- Group roles herald_migrate (owns the schema and all in it) and herald_worker (rows and functions only).

-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: only catalogue writes (roles, owners,
--   grants, default privileges): no scan, no rewrite. On a database upgraded from before legacy
--   version 12, each ALTER ... OWNER takes its table's ACCESS EXCLUSIVE lock until commit, which
--   waits only behind a long transaction on that table. Frozen: a SET would be a new statement.

DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'herald_migrate') THEN
        BEGIN CREATE ROLE herald_migrate NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'herald_worker') THEN
        BEGIN CREATE ROLE herald_worker NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
    END IF;
    -- The migrating user keeps its rights over what it hands to herald_migrate.
    IF NOT pg_has_role(current_user, 'herald_migrate', 'USAGE') THEN
        EXECUTE format('GRANT herald_migrate TO %I', current_user);
    END IF;
END $$;

-- herald_migrate owns the schema, its tables (their indexes and column sequences follow),
-- other sequences, functions, and the migration ledger.
ALTER SCHEMA herald OWNER TO herald_migrate;
DO $$ DECLARE r record; BEGIN
    FOR r IN SELECT c.oid::regclass AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'herald' AND c.relkind IN ('r', 'p', 'v', 'm', 'f') LOOP
        EXECUTE format('ALTER TABLE %s OWNER TO herald_migrate', r.name);
    END LOOP;
    FOR r IN SELECT c.oid::regclass AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'herald' AND c.relkind = 'S' AND c.relowner <> 'herald_migrate'::regrole LOOP
        EXECUTE format('ALTER SEQUENCE %s OWNER TO herald_migrate', r.name);
    END LOOP;
    FOR r IN SELECT p.oid::regprocedure AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'herald' LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO herald_migrate', r.name);
    END LOOP;
END $$;
ALTER TABLE public.herald_schema_ledger OWNER TO herald_migrate;

-- herald_worker: rows and functions only.
REVOKE ALL ON SCHEMA herald FROM PUBLIC;
GRANT USAGE ON SCHEMA herald TO herald_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA herald TO herald_worker;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA herald TO herald_worker;
GRANT EXECUTE ON ALL ROUTINES IN SCHEMA herald TO herald_worker;
GRANT SELECT ON public.herald_schema_ledger TO herald_worker;
ALTER DEFAULT PRIVILEGES FOR ROLE herald_migrate IN SCHEMA herald GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO herald_worker;
ALTER DEFAULT PRIVILEGES FOR ROLE herald_migrate IN SCHEMA herald GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO herald_worker;
ALTER DEFAULT PRIVILEGES FOR ROLE herald_migrate IN SCHEMA herald GRANT EXECUTE ON ROUTINES TO herald_worker;
ALTER DEFAULT PRIVILEGES IN SCHEMA herald GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO herald_worker;
ALTER DEFAULT PRIVILEGES IN SCHEMA herald GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO herald_worker;
ALTER DEFAULT PRIVILEGES IN SCHEMA herald GRANT EXECUTE ON ROUTINES TO herald_worker;
