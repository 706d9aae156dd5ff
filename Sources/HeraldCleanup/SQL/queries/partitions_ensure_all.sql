-- name: PartitionsEnsureAll
-- Creates the coming week's partitions of every day-partitioned table (functions/partitions.sql);
-- how many it made.
-- column made: integer
SELECT herald.partitions_ensure_all(7);
