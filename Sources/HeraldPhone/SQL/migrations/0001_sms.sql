-- herald:legacy-version 2
-- Phone verification codes, the verifications that point at them, provider attempts and rate-limit counters.

-- squawk-ignore-file prefer-bigint-over-int, prefer-identity, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: attempts, max_attempts, sends, code_sends and uncertain_sends count
--   per code or verification, segments per SMS; http_status is an HTTP status, duration_ms one
--   provider call, sms_rate_counters.count the sends of one counter's window.
-- why: prefer-identity: sms_codes.id and sms_send_attempts.id are bigserial: the same ids an
--   identity column makes. Only Herald's statements insert, never with an id, and the sequence
--   belongs to its column (it follows the table to herald_migrate; herald_worker may use it:
--   runtime 0004). Frozen: another column type would be another schema.
-- why: require-lock-timeout, require-statement-timeout: every index is on a table created above in
--   this transaction: no other session can hold a lock on it or have written a row to it.

-- One code per phone number and purpose while pending. Only its keyed hash is stored.
CREATE TABLE herald.sms_codes (
    id            bigserial PRIMARY KEY,
    phone_number  text NOT NULL,
    purpose       text NOT NULL,
    status        text NOT NULL CHECK (status IN ('pending','verified','dead','expired','failed')),
    key_id        text NOT NULL,
    code_hash     bytea NOT NULL,
    attempts      integer NOT NULL DEFAULT 0,
    max_attempts  integer NOT NULL,
    test_number   boolean NOT NULL DEFAULT false,
    sends         integer NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_sent_at  timestamptz,
    expires_at    timestamptz NOT NULL,
    finished_at   timestamptz
);
CREATE UNIQUE INDEX sms_codes_pending_idx ON herald.sms_codes (phone_number, purpose) WHERE status = 'pending';
CREATE INDEX sms_codes_expires_idx ON herald.sms_codes (expires_at);

-- One row per verification id (per sms.verification job); several may share a code.
CREATE TABLE herald.sms_verifications (
    verification_id      text PRIMARY KEY,
    code_id              bigint REFERENCES herald.sms_codes (id) ON DELETE CASCADE,
    phone_number         text NOT NULL,
    purpose              text NOT NULL,
    message_id           text NOT NULL,
    state                text NOT NULL CHECK (state IN ('sending','retrying','sent','reused','test','refused','failed')),
    -- The code's `sends` this verification's SMS carried: a later send of the code supersedes it.
    code_sends           integer,
    -- The presence key of the worker that set `sending` (its advisory lock is held while it lives).
    owner_key            bigint,
    reason               text,
    provider             text,
    provider_message_id  text,
    segments             integer,
    encoding             text,
    uncertain_sends      integer NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_verifications_code_idx ON herald.sms_verifications (code_id);
CREATE INDEX sms_verifications_created_idx ON herald.sms_verifications (created_at);

-- Every provider call: which provider, how it answered.
CREATE TABLE herald.sms_send_attempts (
    id                   bigserial PRIMARY KEY,
    verification_id      text NOT NULL,
    provider             text NOT NULL,
    result               text NOT NULL CHECK (result IN ('accepted','rejected','transient','timeout')),
    http_status          integer,
    error_code           text,
    provider_message_id  text,
    duration_ms          integer NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_send_attempts_verification_idx ON herald.sms_send_attempts (verification_id);
CREATE INDEX sms_send_attempts_created_idx ON herald.sms_send_attempts (created_at);

-- Fixed-window counters shared by every worker: scope (phone, prefix, ip, global, resend), key, window.
CREATE TABLE herald.sms_rate_counters (
    scope         text NOT NULL,
    key           text NOT NULL,
    window_start  timestamptz NOT NULL,
    count         integer NOT NULL,
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (scope, key, window_start)
);
CREATE INDEX sms_rate_counters_expires_idx ON herald.sms_rate_counters (expires_at);

-- herald.sms_prepare was created here: now functions/sms_prepare.sql.
