-- name: MigrateLedgers
-- Which ledgers the database has: the schema ledger, and the old version-only one a database
-- from before it still has.
-- column hasLedger: boolean
-- column hasLegacy: boolean
SELECT to_regclass('public.herald_schema_ledger') IS NOT NULL, to_regclass('public.herald_schema_migrations') IS NOT NULL;
