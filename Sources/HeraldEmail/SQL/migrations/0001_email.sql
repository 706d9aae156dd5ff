-- herald:legacy-version 4
-- Email action requests and their one-time link codes (only keyed hashes).

-- squawk-ignore-file prefer-bigint-over-int, prefer-identity, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: email_requests.uncertain_sends counts the uncertain sends of one
--   request.
-- why: prefer-identity: email_codes.id is a bigserial: the same ids an identity column makes. Only
--   Herald's statements insert, never with an id, and the sequence belongs to its column (it
--   follows the table to herald_migrate; herald_worker may use it: runtime 0004). Frozen: another
--   column type would be another schema.
-- why: require-lock-timeout, require-statement-timeout: every table here is created in this
--   transaction, but herald.account_providers (runtime 0002), which the last statement indexes (see
--   there).

-- One row per email.action request_id: what happened to it. `email` is the normal form
-- (EmailAddress.normalize); personal data, purged with the rest after cleanup.purge.email_days.
CREATE TABLE herald.email_requests (
    request_id           text PRIMARY KEY,
    message_id           text NOT NULL,
    email                text NOT NULL,
    mode                 text NOT NULL,
    -- sending/retrying: a send is under way or will be retried; sent: delivered to a provider;
    -- no_account: nothing sent (enumeration protection, silent); noted: the no-account note sent;
    -- failed: the provider refused it for good.
    state                text NOT NULL CHECK (state IN ('sending','retrying','sent','no_account','noted','failed')),
    -- The presence key of the worker that set `sending` (its advisory lock is held while it lives).
    owner_key            bigint,
    reason               text,
    provider             text,
    provider_message_id  text,
    uncertain_sends      integer NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_requests_created_idx ON herald.email_requests (created_at);

-- One row per link code minted. Only the keyed hash (HMAC-SHA256, key id) is stored,
-- with the address it was sent to, the mode and the approved action code settings.
CREATE TABLE herald.email_codes (
    id          bigserial PRIMARY KEY,
    request_id  text NOT NULL REFERENCES herald.email_requests (request_id) ON DELETE CASCADE,
    email       text NOT NULL,
    mode        text NOT NULL,
    key_id      text NOT NULL,
    code_hash   bytea NOT NULL,
    settings    jsonb NOT NULL,
    status      text NOT NULL CHECK (status IN ('pending','used','expired','superseded','failed')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE UNIQUE INDEX email_codes_hash_idx ON herald.email_codes (code_hash);
CREATE INDEX email_codes_request_idx ON herald.email_codes (request_id);
CREATE INDEX email_codes_expires_idx ON herald.email_codes (expires_at);

-- "Has this address an account?" (enumeration protection): email providers of accounts.
-- why: require-concurrent-index-creation: CREATE INDEX CONCURRENTLY cannot run inside the
--   transaction the migrator wraps each file in. On a fresh install the table is empty; on a
--   database upgraded from before legacy version 4, the build blocks links being added (never
--   reads) for one scan of herald.account_providers.
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX account_providers_email_idx ON herald.account_providers (lower(provider_uid))
    WHERE provider IN ('password', 'emailLink');
