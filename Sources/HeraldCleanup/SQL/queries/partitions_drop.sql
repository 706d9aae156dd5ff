-- name: PartitionsDrop
-- Drops the days of day-partitioned `table` wholly before `retentionDays` ago
-- (functions/partitions.sql): each day dropped, PostgreSQL's estimate of its rows, and how many
-- unfinished rows moved on to the current day.
-- param table: text
-- param retentionDays: integer
-- column partition: text
-- column estimatedRows: bigint
-- column movedRows: bigint
SELECT partition, estimated_rows, moved_rows
  FROM herald.partitions_drop($1::text::regclass, now() - make_interval(days => $2::integer));
