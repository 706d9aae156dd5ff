-- herald:legacy-version 7
-- The provider attempts of each receipt.

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
