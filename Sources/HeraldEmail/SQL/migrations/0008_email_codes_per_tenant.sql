-- A pending email code per address, purpose and tenant (issue 45), as herald.sms_codes per number
-- (sms migration 16): a code mailed for one Twilio Verify service approved another service's
-- verification of the same address (a check found the address's latest code). A job's `tenant`
-- ('' without one, as every code before) now goes with its code: a code is shared, reused and
-- checked only within its tenant. The send limits and the guessing lock still count per address.
-- herald:no-transaction
-- The migrator runs this file's statements one by one outside a transaction, as CREATE INDEX
-- CONCURRENTLY needs: herald-email writes herald.email_otp_codes on every code. Each statement is
-- safe to run again. The old functions are dropped here and their new forms (a trailing tenant
-- argument with a default, so a previous version's call still resolves) are applied right after the
-- migrations (functions/email_otp_prepare.sql, functions/email_otp_find.sql).
-- squawk-ignore-file require-lock-timeout, require-statement-timeout, prefer-robust-stmts, ban-drop-function
-- why: require-lock-timeout, require-statement-timeout: the ADD COLUMN is catalog only (a constant
--   default, no rewrite on PostgreSQL 11+); CONCURRENTLY takes only a SHARE UPDATE EXCLUSIVE lock,
--   which lets reads and writes go on, and a statement timeout would only make a large build start again.
-- why: prefer-robust-stmts: every statement is IF [NOT] EXISTS, and the DROP before the CREATE
--   makes the index builds safe to run again.
-- why: ban-drop-function: each is replaced, after the migrations, by its form with one more
--   argument with a default, which a previous version's call (one argument fewer) resolves to.
ALTER TABLE herald.email_otp_codes ADD COLUMN IF NOT EXISTS tenant text NOT NULL DEFAULT '';
DROP INDEX CONCURRENTLY IF EXISTS herald.email_otp_codes_pending_tenant_idx;
CREATE UNIQUE INDEX CONCURRENTLY email_otp_codes_pending_tenant_idx ON herald.email_otp_codes (email, purpose, tenant) WHERE status = 'pending';
DROP INDEX CONCURRENTLY IF EXISTS herald.email_otp_codes_tenant_idx;
CREATE INDEX CONCURRENTLY email_otp_codes_tenant_idx ON herald.email_otp_codes (email, purpose, tenant, id);
DROP FUNCTION IF EXISTS herald.email_otp_prepare(text, text, text, text, boolean, text, bytea, integer, integer, integer,
    text[], text[], integer[], integer[], bigint, integer, integer, integer, integer);
DROP FUNCTION IF EXISTS herald.email_otp_find(text, text);
DROP INDEX CONCURRENTLY IF EXISTS herald.email_otp_codes_pending_idx;
DROP INDEX CONCURRENTLY IF EXISTS herald.email_otp_codes_email_idx;
