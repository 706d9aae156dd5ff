-- name: CleanupPolicyLock
-- Locks the policy row for the transaction: one policy change at a time.
-- column locked: integer
SELECT 1 FROM herald.cleanup_policy FOR UPDATE;
