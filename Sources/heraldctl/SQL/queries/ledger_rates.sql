-- name: LedgerRates
-- Jobs finished per queue in the last minute and the last five (queues with none in five minutes left out).
-- column queue: text
-- column lastMinute: bigint
-- column lastFiveMinutes: bigint
SELECT queue, count(*) FILTER (WHERE finished_at >= now() - interval '1 minute')::bigint, count(*)::bigint
FROM herald.job_runs WHERE finished_at >= now() - interval '5 minutes' GROUP BY queue ORDER BY queue;
