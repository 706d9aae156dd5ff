-- herald:legacy-version 6
-- Email provider attempts, and the send decision as one SQL function (email_prepare).

CREATE TABLE herald.email_send_attempts (
    id                   bigserial PRIMARY KEY,
    request_id           text NOT NULL,
    provider             text NOT NULL,
    result               text NOT NULL CHECK (result IN ('accepted','rejected','transient','timeout')),
    http_status          integer,
    error_code           text,
    provider_message_id  text,
    duration_ms          integer NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_send_attempts_request_id_idx ON herald.email_send_attempts (request_id);
CREATE INDEX email_send_attempts_created_idx ON herald.email_send_attempts (created_at);

-- herald.email_prepare was created here: now functions/email_prepare.sql.
