-- herald:legacy-version 17
-- A confirmed receipt spent once, as app evidence for one SMS verification (push_receipt_consume).

ALTER TABLE herald.push_verifications
    ADD COLUMN consumed_at timestamptz,
    ADD COLUMN consumed_for text;

-- herald.push_receipt_consume was created here: now functions/push_receipt_consume.sql.
