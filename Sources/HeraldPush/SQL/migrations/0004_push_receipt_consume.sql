-- herald:legacy-version 17
-- A confirmed receipt spent once, as app evidence for one SMS verification (push_receipt_consume).

-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: two nullable columns without a default are
--   a catalogue change (no rewrite, no scan); herald.push_verifications' ACCESS EXCLUSIVE lock
--   lasts that write, and waits only behind a long transaction on the table. Frozen: a SET would be
--   a new statement.
ALTER TABLE herald.push_verifications
    ADD COLUMN consumed_at timestamptz,
    ADD COLUMN consumed_for text;

-- herald.push_receipt_consume was created here: now functions/push_receipt_consume.sql.
