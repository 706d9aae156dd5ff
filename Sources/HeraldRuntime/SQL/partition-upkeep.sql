-- The partition upkeep the migrator runs on every migrate, before the ownership finalizer: the
-- day-partitioned tables get their partitions through the coming week (functions/partitions.sql;
-- cleanup runs keep it so). Without that function (a database only some groups migrated), nothing.
DO $$
BEGIN
    IF to_regprocedure('herald.partitions_ensure_all(integer)') IS NOT NULL THEN
        PERFORM herald.partitions_ensure_all(7);
    END IF;
END
$$;
