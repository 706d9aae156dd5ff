-- name: MigrateLockTry
-- Tries the migrator's advisory lock without waiting (a session waiting in `pg_advisory_lock`
-- holds a snapshot that `CREATE INDEX CONCURRENTLY` in the holder would wait for).
-- param key: bigint
-- column taken: boolean
SELECT pg_try_advisory_lock($1::bigint);
