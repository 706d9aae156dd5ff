-- name: CleanupRunLock
-- Locks a run's row for the transaction (before a table's lock: the drop then never holds it
-- while waiting for another worker's count).
-- param id: text
-- column locked: integer
SELECT 1 FROM herald.cleanup_runs WHERE id = $1::text FOR UPDATE;
