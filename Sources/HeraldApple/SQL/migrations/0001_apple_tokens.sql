-- herald:legacy-version 19
-- Apple refresh tokens (encrypted), every apple.token and apple.revoke job, Apple's calls, revoke on delete.

-- squawk-ignore-file prefer-bigint-over-int, prefer-identity, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: calls and uncertain_calls count the calls of one job, http_status is
--   an HTTP status, duration_ms one call to Apple.
-- why: prefer-identity: apple_attempts.id is a bigserial: the same ids an identity column makes.
--   Only Herald's statements insert, never with an id, and the sequence belongs to its column (it
--   follows the table to herald_migrate; herald_worker may use it: runtime 0004). Frozen: another
--   column type would be another schema.
-- why: require-lock-timeout, require-statement-timeout: every index is on a table created above in
--   this transaction: no other session can hold a lock on it or have written a row to it.

-- One refresh token per account and client id, AES-256-GCM under apple.token_keys'
-- key key_id (the record's account and client id are the associated data). No foreign key
-- to herald.accounts: a deleted account's token stays until its revocation deletes it.
CREATE TABLE herald.apple_tokens (
    account_id     text NOT NULL,
    client_id      text NOT NULL,
    key_id         text NOT NULL,
    nonce          bytea NOT NULL CHECK (octet_length(nonce) = 12),
    ciphertext     bytea NOT NULL,
    tag            bytea NOT NULL CHECK (octet_length(tag) = 16),
    -- The jobs exchange a revocation of this token is enqueued on (the storing worker's).
    jobs_exchange  text NOT NULL,
    -- The job that stored it.
    message_id     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, client_id)
);

-- One row per apple.token / apple.revoke job (its message_id), written before Apple is
-- called. step: what the call in flight does (exchange: a single-use code, never sent
-- twice; revoke: a token, which Apple revokes again harmlessly).
CREATE TABLE herald.apple_jobs (
    message_id       text PRIMARY KEY,
    operation        text NOT NULL CHECK (operation IN ('token','revoke')),
    account_id       text NOT NULL,
    client_id        text NOT NULL,
    -- hex SHA-256 of the authorization code, never the code: one exchange per code.
    code_hash        text UNIQUE,
    state            text NOT NULL CHECK (state IN ('calling','retrying','stored','revoked','nothing','failed','uncertain')),
    step             text CHECK (step IN ('exchange','revoke')),
    -- The presence key of the worker that set `calling` (its advisory lock is held while it lives).
    owner_key        bigint,
    calls            integer NOT NULL DEFAULT 0,
    uncertain_calls  integer NOT NULL DEFAULT 0,
    http_status      integer,
    -- Apple's error (invalid_grant, invalid_client, ...) or Herald's check that failed.
    error            text,
    reason           text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX apple_jobs_account_idx ON herald.apple_jobs (account_id);
CREATE INDEX apple_jobs_updated_idx ON herald.apple_jobs (updated_at);

CREATE TABLE herald.apple_attempts (
    id                   bigserial PRIMARY KEY,
    message_id           text NOT NULL,
    provider             text NOT NULL,
    result               text NOT NULL CHECK (result IN ('accepted','rejected','transient','timeout')),
    http_status          integer,
    error_code           text,
    provider_message_id  text,
    duration_ms          integer NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX apple_attempts_message_id_idx ON herald.apple_attempts (message_id);
CREATE INDEX apple_attempts_created_idx ON herald.apple_attempts (created_at);

-- herald.apple_prepare was created here: now functions/apple_prepare.sql.
-- herald.apple_exhausted was created here: now functions/apple_exhausted.sql.
-- herald.apple_revoke_deleted_accounts and its trigger accounts_apple_revoke were created here:
-- now functions/apple_revoke_deleted_accounts.sql.
