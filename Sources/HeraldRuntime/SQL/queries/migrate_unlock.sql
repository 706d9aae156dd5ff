-- name: MigrateUnlock
-- Releases the migrator's advisory lock.
-- param key: bigint
-- column released: boolean
SELECT pg_advisory_unlock($1::bigint);
