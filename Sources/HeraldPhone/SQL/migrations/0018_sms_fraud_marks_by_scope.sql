-- The fraud guard judges a burst inside itself (issue 46, functions/fraud_guard_check.sql): a
-- scope below its floor in sends counted reads what the guard let through in the window, its
-- marks by region or prefix and time, up to the floor.
-- herald:no-transaction
-- The migrator runs this file's statements one by one outside a transaction, as CREATE INDEX
-- CONCURRENTLY needs: herald-sms writes herald.sms_fraud_marks on every job the guard lets
-- through. Each statement is safe to run again (a failed build leaves an INVALID index, dropped
-- by the next run before it builds).
-- squawk-ignore-file require-lock-timeout, require-statement-timeout, prefer-robust-stmts
-- why: require-lock-timeout, require-statement-timeout: CONCURRENTLY takes only a SHARE UPDATE
--   EXCLUSIVE lock, which lets reads and writes go on, and a statement timeout would only make a
--   large build start again.
-- why: prefer-robust-stmts: the DROP before each CREATE makes the build safe to run again.
DROP INDEX CONCURRENTLY IF EXISTS herald.sms_fraud_marks_region_idx;
CREATE INDEX CONCURRENTLY sms_fraud_marks_region_idx ON herald.sms_fraud_marks (region, created_at);
DROP INDEX CONCURRENTLY IF EXISTS herald.sms_fraud_marks_prefix_idx;
CREATE INDEX CONCURRENTLY sms_fraud_marks_prefix_idx ON herald.sms_fraud_marks (prefix, created_at);
