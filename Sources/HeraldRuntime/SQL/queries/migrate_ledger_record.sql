-- name: MigrateLedgerRecord
-- Records a file as applied or adopted (`how`), with its checksum.
-- param group: text
-- param kind: text
-- param path: text
-- param version: integer?
-- param checksum: text
-- param how: text
INSERT INTO public.herald_schema_ledger (schema_group, kind, path, version, checksum, how)
VALUES ($1::text, $2::text, $3::text, $4::int, $5::text, $6::text)
ON CONFLICT (schema_group, path) DO UPDATE SET checksum = EXCLUDED.checksum, how = EXCLUDED.how, applied_at = now();
