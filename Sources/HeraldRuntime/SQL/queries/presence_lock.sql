-- name: PresenceLock
-- Takes the session-level advisory lock on a worker's owner key, waiting for it: held for the
-- session's life, it tells the ledger the worker's jobs are not to be taken over.
-- param key: bigint
-- column locked: boolean
SELECT true FROM pg_advisory_lock($1::bigint);
