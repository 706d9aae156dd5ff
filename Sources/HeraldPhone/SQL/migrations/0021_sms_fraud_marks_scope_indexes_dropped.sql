-- The marks' indexes by region and by prefix (migration 0018) served the let-through count when
-- it counted marks one by one. Since migration 0020 the guard reads that count from
-- herald.sms_fraud_let_through, and nothing reads marks by region or prefix on a hot path (a
-- chaos scenario's cleanup deletes by region, once). Every mark the guard writes still updated
-- both: two index entries a job, for no reader. A herald-sms of the previous version (migration
-- 0020's) does not read them either.
-- herald:no-transaction
-- The migrator runs this file's statements one by one outside a transaction, as DROP INDEX
-- CONCURRENTLY needs: herald-sms writes herald.sms_fraud_marks on every job the guard lets through.
-- Each statement is safe to run again.
-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: CONCURRENTLY waits for the transactions
--   that use the index without blocking the marks' writers.
DROP INDEX CONCURRENTLY IF EXISTS herald.sms_fraud_marks_region_idx;
DROP INDEX CONCURRENTLY IF EXISTS herald.sms_fraud_marks_prefix_idx;
