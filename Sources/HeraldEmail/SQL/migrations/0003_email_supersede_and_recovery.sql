-- herald:legacy-version 10
-- Email links: a used link supersedes the other pending ones; a changed address's recovery notice.

-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: on a fresh install the tables are empty. On
--   a database upgraded from before legacy version 10, this file holds herald.email_requests'
--   ACCESS EXCLUSIVE lock until commit (nullable columns without a default: no rewrite; the new
--   check reads the table once) and blocks writes to herald.email_codes for one index build.
--   Frozen: a SET would be a new statement.

ALTER TABLE herald.email_requests
    -- verify_and_change_email: the old address (the recovery notice goes there);
    -- recover_email: the address it had been changed to. Personal data, purged with the row.
    ADD COLUMN paired_email text,
    -- verify_and_change_email: the recover_email job (its JSON body) and the exchange to
    -- publish it on, enqueued when the link is used.
    ADD COLUMN recovery_job text,
    ADD COLUMN recovery_exchange text;
-- queued: enqueued by Herald (a recovery notice), not tried yet.
-- why: ban-drop-constraint: the next statement adds the check again, in this transaction, with one
--   more state (queued): no other session sees the table without it, and every state it allowed is
--   still allowed.
-- squawk-ignore ban-drop-constraint
ALTER TABLE herald.email_requests DROP CONSTRAINT email_requests_state_check;
-- why: constraint-missing-not-valid: it allows every state the dropped check allowed, so every row
--   passes; and this transaction holds herald.email_requests' ACCESS EXCLUSIVE lock until commit
--   anyway (the statements above), so NOT VALID then VALIDATE would shorten no lock.
-- squawk-ignore constraint-missing-not-valid
ALTER TABLE herald.email_requests ADD CONSTRAINT email_requests_state_check
    CHECK (state IN ('queued','sending','retrying','sent','no_account','noted','failed'));
-- why: require-concurrent-index-creation: CREATE INDEX CONCURRENTLY cannot run inside the
--   transaction the migrator wraps each file in. On a fresh install the table is empty; on a
--   database upgraded from before legacy version 10, the build blocks links being minted and used
--   (never reads) for one scan of herald.email_codes.
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX email_codes_pending_idx ON herald.email_codes (email, mode) WHERE status = 'pending';

-- herald.email_prepare was created here with new arguments (the old signature dropped): now
-- functions/email_prepare.sql.
-- why: ban-drop-function: the previous signature of email_prepare, whose only callers are Herald's
--   own email workers: from legacy version 10 on they call the new one
--   (functions/email_prepare.sql), and the old overload would stay behind, stale. Workers of an
--   older release lose it when this runs: migrate, then roll out (docs/operations.md, "Upgrades").
-- squawk-ignore ban-drop-function
DROP FUNCTION IF EXISTS herald.email_prepare(text, text, text, text, text, bigint, text, bytea, jsonb, integer);
-- herald.email_use_code was created here: now functions/email_use_code.sql.
