-- name: MigrateLedgerRead
-- The schema ledger: every file applied or adopted, with the checksum it had.
-- column group: text
-- column kind: text
-- column path: text
-- column checksum: text
-- column adopted: boolean
-- column appliedAt: timestamp with time zone
SELECT schema_group, kind, path, checksum, how = 'adopted', applied_at FROM public.herald_schema_ledger;
