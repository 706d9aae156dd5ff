-- Autovacuum analyzes the hot SMS tables after 1,000 changed rows, not 50 (issue 31). An analyze at a few dozen rows has every pooled connection plan these tables as one page, and it keeps those plans while a burst grows them: 3.2 ms of PostgreSQL CPU per job over the first 10,240 jobs, against 0.15-0.25 warm.
--
-- Why. A pooled connection plans each statement of a PL/pgSQL function once (these functions
-- keep generic plans: plan_cache_mode = force_generic_plan). Prepared statements past their fifth
-- run do the same. The connection keeps the plan until a table it reads is analyzed or altered.
-- On a fresh deployment the first jobs find empty tables. Autovacuum analyzes a table once 50 rows
-- changed (autovacuum_analyze_threshold), at its next pass (autovacuum_naptime, 1 min). When a
-- burst starts slowly, that pass finds a few dozen or a few hundred rows. Every connection then
-- plans again for a table of a page or two, where reading the whole table is the cheapest plan. It
-- keeps those plans until the next pass, while the table grows by thousands of rows a second.
--
-- This alone is not the fix. Issue 31's main change is to the functions/*.sql of
-- herald.sms_prepare_batch, herald.sms_rate_take and herald.fraud_guard_check: their statements
-- are now planned well on any table (correlated lookups, equality on every index column before
-- window_start, SET enable_seqscan = off). With that change, an early analyze no longer slows
-- them. This threshold covers the statements that were not rewritten: herald.sms_prepare's,
-- the `sent` update with its fraud-guard trigger, and the verification check.
--
-- Measured with a pgbench copy of one worker's statements, in groups of 16 jobs: the claim, the
-- fraud guard, herald.sms_prepare_batch, sent, the outcome with its event, and the relay. Two
-- connections, the first 10,240 jobs on a freshly migrated database, PostgreSQL backend CPU per
-- job from /proc. With the functions as they were, controls off:
--   tables analyzed at about 150 rows        3.20-3.26 ms
--   tables analyzed at about 600 rows        1.93 ms
--   new connections after 10,240 jobs        0.15-0.18 ms
-- Controls on: 1,280 jobs over 68 s, then 10,240 at once, with autovacuum left to itself:
--   the functions as they were              2.41 ms
--   the same with this migration             2.42 ms
--   this migration and the new functions     0.28 ms
-- The `sent` update on tables analyzed empty costs 0.038-0.047 ms per job, against 0.021.
--
-- From 1,000 changed rows on, this threshold changes nothing. Autovacuum analyzes at 1,000 + 10 %
-- of the table (autovacuum_analyze_scale_factor) instead of 50 + 10 %. Never ANALYZE these tables
-- while they are empty, for example after a migration: every plan would then be made for a table
-- of one page (2.1-3.6 ms per job with the controls on).

-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: SET (autovacuum_analyze_threshold) rewrites
--   nothing and takes SHARE UPDATE EXCLUSIVE, which reads and writes neither wait for nor queue
--   behind; it waits only for a VACUUM, ANALYZE or schema change of the same table.

ALTER TABLE herald.sms_codes SET (autovacuum_analyze_threshold = 1000);
ALTER TABLE herald.sms_verifications SET (autovacuum_analyze_threshold = 1000);
ALTER TABLE herald.sms_rate_counters SET (autovacuum_analyze_threshold = 1000);
ALTER TABLE herald.sms_send_attempts SET (autovacuum_analyze_threshold = 1000);
ALTER TABLE herald.sms_fraud_marks SET (autovacuum_analyze_threshold = 1000);
ALTER TABLE herald.sms_fraud_counts SET (autovacuum_analyze_threshold = 1000);
