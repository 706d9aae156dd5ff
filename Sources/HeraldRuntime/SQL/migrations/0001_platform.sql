-- herald:legacy-version 1
-- The platform: schema herald, the job runner's ledger (job_runs), the event outbox and the dev outbox.

-- squawk-ignore-file prefer-bigint-over-int, prefer-identity, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: job_runs.attempts counts the deliveries of one job.
-- why: prefer-identity: event_outbox.id and dev_outbox.id are bigserial: the same ids an identity
--   column makes. Only Herald's statements insert, never with an id, and the sequence belongs to
--   its column (it follows the table to herald_migrate; herald_worker may use it: runtime 0004).
--   Frozen: another column type would be another schema.
-- why: require-lock-timeout, require-statement-timeout: every statement creates the schema, a
--   table, or an index on a table created above in this transaction: nothing another session can
--   hold a lock on or have written a row to.

CREATE SCHEMA IF NOT EXISTS herald;

-- One row per job message_id: the idempotency ledger of the job runner.
CREATE TABLE herald.job_runs (
    message_id   text PRIMARY KEY,
    job_type     text NOT NULL,
    queue        text NOT NULL,
    status       text NOT NULL CHECK (status IN ('running','retrying','completed','rejected','dead')),
    attempts     integer NOT NULL DEFAULT 1,
    owner_key    bigint,
    claim_token  text,
    lease_until  timestamptz,
    reason       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);
CREATE INDEX job_runs_finished_idx ON herald.job_runs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX job_runs_status_idx ON herald.job_runs (queue, status);

-- Events written with a job's outcome, relayed to exchange herald.events.
CREATE TABLE herald.event_outbox (
    id           bigserial PRIMARY KEY,
    exchange     text NOT NULL,
    name         text NOT NULL,
    message_id   text NOT NULL,
    body         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX event_outbox_exchange_idx ON herald.event_outbox (exchange, id);

-- What the dev outbox provider "delivered", instead of an SMS, email or push.
CREATE TABLE herald.dev_outbox (
    id           bigserial PRIMARY KEY,
    kind         text NOT NULL,
    message_id   text NOT NULL UNIQUE,
    job_type     text NOT NULL,
    recipient    text NOT NULL,
    body         jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
