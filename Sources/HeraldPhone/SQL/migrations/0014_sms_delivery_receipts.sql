-- Delivery receipts (issue 35): each accepted send attempt learns what became of its message from
-- the provider's receipts (Twilio's status callbacks, Kannel's DLRs, the webhook provider's),
-- applied by herald.sms_receipt_apply (functions/sms_receipt_apply.sql), which finds the attempt
-- by the provider's message id across the table's days.
-- The fraud guard learns from them: an undelivered receipt is counted in its verification's
-- scopes (sms_fraud_counts.undelivered), and herald.fraud_guard_check pauses a scope whose sends
-- are mostly undelivered as it pauses one whose codes are never verified.
-- squawk-ignore-file require-concurrent-index-creation, require-lock-timeout, require-statement-timeout, prefer-bigint-over-int
-- why: require-concurrent-index-creation: the index is on a partitioned table (no CONCURRENTLY
--   there, and a migration is one transaction); PostgreSQL builds it on each day, the legacy
--   partition included, holding off inserts into the table while it builds (seconds per million
--   rows: docs/scaling.md). Every receipt's lookup needs it on each day it searches.
-- why: require-lock-timeout, require-statement-timeout: as 0013, a timeout would only make a large
--   table's migration fail; new columns without a default and a NOT VALID check rewrite nothing.
-- why: prefer-bigint-over-int: counts of one minute of one scope, as sent and verified beside them.
ALTER TABLE herald.sms_send_attempts
    ADD COLUMN delivery_status text,
    ADD COLUMN delivery_status_at timestamptz,
    ADD COLUMN delivery_error_code text,
    -- The sms.receipt job (its message id) whose receipt set delivery_status: only that job, run
    -- again after a crash, emits the status's event again.
    ADD COLUMN delivery_receipt_id text;
-- NOT VALID: every existing row holds NULL; new and updated rows are checked.
ALTER TABLE herald.sms_send_attempts ADD CONSTRAINT sms_send_attempts_delivery_status_check
    CHECK (delivery_status IN ('queued', 'sent', 'delivered', 'undelivered')) NOT VALID;
CREATE INDEX sms_send_attempts_message_idx ON herald.sms_send_attempts (provider_message_id)
    WHERE provider_message_id IS NOT NULL;

-- Constant defaults: PostgreSQL adds these columns without rewriting the tables.
ALTER TABLE herald.sms_fraud_counts ADD COLUMN undelivered integer NOT NULL DEFAULT 0;
ALTER TABLE herald.sms_fraud_pauses ADD COLUMN undelivered integer NOT NULL DEFAULT 0;
-- herald.fraud_guard_check gains p_max_undelivered (functions/fraud_guard_check.sql); its previous
-- signature stays there as a wrapper for the previous version's workers during an upgrade.
