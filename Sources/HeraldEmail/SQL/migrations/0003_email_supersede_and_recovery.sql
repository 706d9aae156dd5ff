-- herald:legacy-version 10
-- Email links: a used link supersedes the other pending ones; a changed address's recovery notice.

ALTER TABLE herald.email_requests
    -- verify_and_change_email: the old address (the recovery notice goes there);
    -- recover_email: the address it had been changed to. Personal data, purged with the row.
    ADD COLUMN paired_email text,
    -- verify_and_change_email: the recover_email job (its JSON body) and the exchange to
    -- publish it on, enqueued when the link is used.
    ADD COLUMN recovery_job text,
    ADD COLUMN recovery_exchange text;
-- queued: enqueued by Herald (a recovery notice), not tried yet.
ALTER TABLE herald.email_requests DROP CONSTRAINT email_requests_state_check;
ALTER TABLE herald.email_requests ADD CONSTRAINT email_requests_state_check
    CHECK (state IN ('queued','sending','retrying','sent','no_account','noted','failed'));
CREATE INDEX email_codes_pending_idx ON herald.email_codes (email, mode) WHERE status = 'pending';

-- herald.email_prepare was created here with new arguments (the old signature dropped): now
-- functions/email_prepare.sql.
DROP FUNCTION IF EXISTS herald.email_prepare(text, text, text, text, text, bigint, text, bytea, jsonb, integer);
-- herald.email_use_code was created here: now functions/email_use_code.sql.
