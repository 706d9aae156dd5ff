-- herald:legacy-version 3
-- The account directory (accounts, their linked providers), the cleanup policy (one row) and cleanup runs.

-- squawk-ignore-file prefer-bigint-over-int, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: cleanup_runs.fan_out and joins count the workers of one run.
-- why: require-lock-timeout, require-statement-timeout: every table here is created in this
--   transaction, but herald.dev_outbox (0001), which the last statement indexes (see there).

-- Accounts, as the front API keeps them. An anonymous account that links any provider
-- is upgraded: the trigger below clears is_anonymous, and cleanup never touches it.
CREATE TABLE herald.accounts (
    id               text PRIMARY KEY,
    created_at       timestamptz NOT NULL DEFAULT now(),
    is_anonymous     boolean NOT NULL DEFAULT true,
    last_sign_in_at  timestamptz,
    disabled         boolean NOT NULL DEFAULT false,
    upgraded_at      timestamptz
);
-- The eligibility scan: anonymous (hence unlinked) accounts, oldest first.
CREATE INDEX accounts_anonymous_created_idx ON herald.accounts (created_at) WHERE is_anonymous;

CREATE TABLE herald.account_providers (
    account_id    text NOT NULL REFERENCES herald.accounts (id) ON DELETE CASCADE,
    provider      text NOT NULL,
    provider_uid  text NOT NULL,
    linked_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, provider),
    UNIQUE (provider, provider_uid)
);

-- herald.account_provider_linked and its trigger account_providers_upgrade were created here:
-- now functions/account_provider_linked.sql.

-- The cleanup policy: one row. enabled_at is when cleanup was last switched on.
CREATE TABLE herald.cleanup_policy (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    enabled     boolean NOT NULL DEFAULT false,
    enabled_at  timestamptz,
    retention   interval NOT NULL DEFAULT interval '30 days' CHECK (retention > interval '0'),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (NOT enabled OR enabled_at IS NOT NULL)
);
INSERT INTO herald.cleanup_policy DEFAULT VALUES;

-- One row per cleanup run; counts are added by each batch's transaction.
CREATE TABLE herald.cleanup_runs (
    id                 text PRIMARY KEY,
    status             text NOT NULL CHECK (status IN ('scheduled','running','completed','cancelled','failed')),
    dry_run            boolean NOT NULL DEFAULT false,
    max_accounts       bigint NOT NULL CHECK (max_accounts > 0),
    fan_out            integer NOT NULL DEFAULT 1,
    retention          interval,
    enabled_at         timestamptz,
    requested_at       timestamptz NOT NULL DEFAULT now(),
    started_at         timestamptz,
    ended_at           timestamptz,
    heartbeat_at       timestamptz NOT NULL DEFAULT now(),
    eligible_at_start  bigint,
    accounts_deleted   bigint NOT NULL DEFAULT 0,
    purged             jsonb NOT NULL DEFAULT '{}',
    batches            bigint NOT NULL DEFAULT 0,
    joins              integer NOT NULL DEFAULT 0,
    reason             text
);
-- At most one active (non-dry) run: a second schedule cannot start a duplicate.
CREATE UNIQUE INDEX cleanup_runs_one_active_idx ON herald.cleanup_runs ((true))
    WHERE status IN ('scheduled','running') AND NOT dry_run;
CREATE INDEX cleanup_runs_requested_idx ON herald.cleanup_runs (requested_at DESC);
CREATE INDEX cleanup_runs_ended_idx ON herald.cleanup_runs (ended_at) WHERE ended_at IS NOT NULL;

-- Purge scans by age. (Not on event_outbox: the relay keeps it small, its purge is
-- off by default, and an index there would cost every account.deleted insert.)
-- why: require-concurrent-index-creation: CREATE INDEX CONCURRENTLY cannot run inside the
--   transaction the migrator wraps each file in. herald.dev_outbox is the development outbox
--   provider's record, empty unless that provider is configured; the build blocks its writes (never
--   reads) for one scan.
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX dev_outbox_created_idx ON herald.dev_outbox (created_at);
