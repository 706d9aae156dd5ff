-- name: LedgerOpen
-- Jobs not finished (running or retrying), per queue, job type and status.
-- column queue: text
-- column jobType: text
-- column status: text
-- column count: bigint
SELECT queue, job_type, status, count(*)::bigint FROM herald.job_runs
WHERE status IN ('running', 'retrying') GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
