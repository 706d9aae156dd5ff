-- name: LedgerFinished
-- Jobs finished in the last `windowSeconds`, per queue, job type and final status.
-- param windowSeconds: double precision
-- column queue: text
-- column jobType: text
-- column status: text
-- column count: bigint
SELECT queue, job_type, status, count(*)::bigint FROM herald.job_runs
WHERE finished_at >= now() - make_interval(secs => $1::double precision) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
