-- A pending code per number, purpose and tenant (issue 45): a code sent for one Twilio Verify
-- service was reused for, and approved, another service's verification of the same number, and
-- then the first service's own verification read 404. A job's `tenant` (herald-api sets it to the
-- service's sid; '' without one, as every code before) now goes with its code: a code is shared,
-- reused and checked only within its tenant. The limits, the guessing lock and the fraud guard
-- still count per number, whatever the tenant.
-- herald:no-transaction
-- The migrator runs this file's statements one by one outside a transaction, as CREATE INDEX
-- CONCURRENTLY needs: herald-sms writes herald.sms_codes on every job. Each statement is safe to
-- run again (a failed build leaves an INVALID index, dropped by the next run before it builds).
-- The old functions are dropped here and their new forms (a trailing tenant argument with a
-- default, so a previous version's call still resolves) are applied right after the migrations
-- (functions/sms_prepare.sql, functions/sms_prepare_batch.sql): in between, a job finds no
-- herald.sms_prepare_batch and is retried.
-- squawk-ignore-file require-lock-timeout, require-statement-timeout, prefer-robust-stmts, ban-drop-function
-- why: require-lock-timeout, require-statement-timeout: the ADD COLUMN is catalog only (a constant
--   default, no rewrite on PostgreSQL 11+); CONCURRENTLY takes only a SHARE UPDATE EXCLUSIVE lock,
--   which lets reads and writes go on, and a statement timeout would only make a large build start again.
-- why: prefer-robust-stmts: every statement is IF [NOT] EXISTS, and the DROP before the CREATE
--   makes the index build safe to run again.
-- why: ban-drop-function: each is replaced, after the migrations, by its form with one more
--   argument with a default, which a previous version's call (one argument fewer) resolves to.
ALTER TABLE herald.sms_codes ADD COLUMN IF NOT EXISTS tenant text NOT NULL DEFAULT '';
DROP INDEX CONCURRENTLY IF EXISTS herald.sms_codes_pending_tenant_idx;
CREATE UNIQUE INDEX CONCURRENTLY sms_codes_pending_tenant_idx ON herald.sms_codes (phone_number, purpose, tenant) WHERE status = 'pending';
DROP FUNCTION IF EXISTS herald.sms_prepare_batch(text[], text[], text[], text[], boolean[], boolean[], text[], bytea[], integer, integer, integer,
    integer[], text[], text[], integer[], integer[], bigint, integer, integer, integer, integer);
DROP FUNCTION IF EXISTS herald.sms_prepare(text, text, text, text, boolean, boolean, text, bytea, integer, integer, integer,
    text[], text[], integer[], integer[], bigint, integer, integer, integer, integer);
DROP INDEX CONCURRENTLY IF EXISTS herald.sms_codes_pending_idx;
