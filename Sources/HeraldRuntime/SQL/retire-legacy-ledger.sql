-- The old ledger (one version sequence for every module), once its versions are recorded in
-- public.herald_schema_ledger as adopted: run by the migrator in the same transaction.
DROP TABLE public.herald_schema_migrations;
