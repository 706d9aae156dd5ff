-- herald:legacy-version 5
-- Push verifications (a receipt's hashed secret, how its push went), device token health, push_prepare.

-- squawk-ignore-file prefer-bigint-over-int, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: sends and uncertain_sends count the pushes of one receipt,
--   http_status is an HTTP status, window_count one device's pushes in its rate window.
-- why: require-lock-timeout, require-statement-timeout: every index is on a table created above in
--   this transaction: no other session can hold a lock on it or have written a row to it.

-- One row per receipt (per push.verification job). Only the secret's keyed hash is stored.
CREATE TABLE herald.push_verifications (
    receipt              text PRIMARY KEY,
    message_id           text NOT NULL,
    platform             text NOT NULL CHECK (platform IN ('apns','fcm')),
    environment          text NOT NULL CHECK (environment IN ('sandbox','production')),
    app_id               text NOT NULL,
    -- hex SHA-256 of platform:token (herald.device_tokens).
    token_hash           text NOT NULL,
    state                text NOT NULL CHECK (state IN ('sending','retrying','sent','failed','refused')),
    secret_status        text NOT NULL CHECK (secret_status IN ('pending','verified','expired','void')),
    key_id               text,
    secret_hash          bytea,
    expires_at           timestamptz NOT NULL,
    -- The presence key of the worker that set `sending` (its advisory lock is held while it lives).
    owner_key            bigint,
    sends                integer NOT NULL DEFAULT 0,
    uncertain_sends      integer NOT NULL DEFAULT 0,
    provider             text,
    provider_message_id  text,
    http_status          integer,
    reason               text,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    verified_at          timestamptz
);
CREATE INDEX push_verifications_expires_idx ON herald.push_verifications (expires_at);
CREATE INDEX push_verifications_token_idx ON herald.push_verifications (token_hash);

-- The health of each device token, and its background-push rate window.
CREATE TABLE herald.device_tokens (
    token_hash       text PRIMARY KEY,
    platform         text NOT NULL,
    -- The token's first and last characters, for people.
    token_hint       text NOT NULL,
    app_id           text NOT NULL,
    environment      text NOT NULL,
    status           text NOT NULL DEFAULT 'valid' CHECK (status IN ('valid','invalid')),
    -- unregistered, bad_device_token, invalid_argument, and the provider's own words.
    reason           text,
    detail           text,
    -- APNs 410's timestamp (else when we learnt it): invalid unless registered again after it.
    invalid_since    timestamptz,
    pushes           bigint NOT NULL DEFAULT 0,
    failures         bigint NOT NULL DEFAULT 0,
    last_success_at  timestamptz,
    last_failure_at  timestamptz,
    window_start     timestamptz,
    window_count     integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX device_tokens_updated_idx ON herald.device_tokens (updated_at);

-- herald.push_prepare was created here: now functions/push_prepare.sql.
