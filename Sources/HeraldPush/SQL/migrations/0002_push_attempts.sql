-- herald:legacy-version 7
-- The provider attempts of each receipt.

-- squawk-ignore-file prefer-bigint-over-int, prefer-identity, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: http_status is an HTTP status, duration_ms one provider call.
-- why: prefer-identity: id is a bigserial: the same ids an identity column makes. Only Herald's
--   statements insert, never with an id, and the sequence belongs to its column (it follows the
--   table to herald_migrate; herald_worker may use it: runtime 0004). Frozen: another column type
--   would be another schema.
-- why: require-lock-timeout, require-statement-timeout: both indexes are on a table created above
--   in this transaction: no other session can hold a lock on it or have written a row to it.

CREATE TABLE herald.push_send_attempts (
    id                   bigserial PRIMARY KEY,
    receipt              text NOT NULL,
    provider             text NOT NULL,
    result               text NOT NULL CHECK (result IN ('accepted','rejected','transient','timeout')),
    http_status          integer,
    error_code           text,
    provider_message_id  text,
    duration_ms          integer NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX push_send_attempts_receipt_idx ON herald.push_send_attempts (receipt);
CREATE INDEX push_send_attempts_created_idx ON herald.push_send_attempts (created_at);
