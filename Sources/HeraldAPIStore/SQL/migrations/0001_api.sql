-- herald-api's state: its API keys, and the Services and Verifications of its Twilio Verify v2
-- compatible routes. The codes themselves stay in herald.sms_codes (the sms group): a Verify
-- verification is a list of Herald SMS verifications (its send attempts) of one number.

-- squawk-ignore-file require-lock-timeout, require-statement-timeout, prefer-bigint-over-int
-- why: require-lock-timeout, require-statement-timeout: every table and index is created in this
--   transaction: no other session can hold a lock on them or have written a row to them.
-- why: prefer-bigint-over-int: every integer here is a setting or a count with a CHECK bound far
--   below 2^31 (code length, seconds up to a day, attempts up to 20); none is an id or a sequence.

-- One row per API key. The secret is never stored: only its HMAC-SHA256 under the key ring's key
-- `key_id`, bound to the key's id (SecretHasher, context `api-key:<id>`). scopes: the route
-- families the key may call (sms, email, push, apple, accounts, verify). A key is refused once
-- revoked_at or expires_at has passed. last_used_at is written at most once a minute per key.
CREATE TABLE herald.api_keys (
    id            text PRIMARY KEY CHECK (id ~ '^HK[0-9a-f]{32}$'),
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    scopes        text[] NOT NULL CHECK (cardinality(scopes) > 0),
    key_id        text NOT NULL,
    secret_hash   bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    revoked_at    timestamptz,
    last_used_at  timestamptz
);

-- A Twilio Verify Service (`VA…`): the settings its verifications are made with.
CREATE TABLE herald.verify_services (
    sid                   text PRIMARY KEY CHECK (sid ~ '^VA[0-9a-f]{32}$'),
    friendly_name         text NOT NULL CHECK (length(friendly_name) BETWEEN 1 AND 64),
    code_length           integer NOT NULL CHECK (code_length BETWEEN 4 AND 10),
    ttl_seconds           integer NOT NULL CHECK (ttl_seconds BETWEEN 60 AND 86400),
    max_send_attempts     integer NOT NULL CHECK (max_send_attempts BETWEEN 1 AND 10),
    max_check_attempts    integer NOT NULL CHECK (max_check_attempts BETWEEN 1 AND 20),
    skip_sms_to_landlines boolean NOT NULL DEFAULT false,
    do_not_share_warning  boolean NOT NULL DEFAULT false,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);

-- A Twilio Verify Verification (`VE…`) of one number in one Service. At most one is pending per
-- (service, number): a second send to the number while it is pending is a resend of it. checks:
-- the codes checked against it. Terminal states stay for reads until purged.
CREATE TABLE herald.verify_verifications (
    sid          text PRIMARY KEY CHECK (sid ~ '^VE[0-9a-f]{32}$'),
    service_sid  text NOT NULL REFERENCES herald.verify_services (sid) ON DELETE CASCADE,
    to_number    text NOT NULL,
    channel      text NOT NULL,
    locale       text,
    status       text NOT NULL CHECK (status IN ('pending','approved','canceled','max_attempts_reached','expired','failed')),
    checks       integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX verify_verifications_pending_idx ON herald.verify_verifications (service_sid, to_number) WHERE status = 'pending';
CREATE INDEX verify_verifications_updated_idx ON herald.verify_verifications (updated_at);

-- Each send of a Verification (`send_code_attempts`): the Herald SMS verification that carried it
-- (its verification_id and message id are the attempt's sid, `VL…`). The last one holds the code.
CREATE TABLE herald.verify_send_attempts (
    verification_sid  text NOT NULL REFERENCES herald.verify_verifications (sid) ON DELETE CASCADE,
    attempt           integer NOT NULL CHECK (attempt >= 1),
    attempt_sid       text NOT NULL UNIQUE CHECK (attempt_sid ~ '^VL[0-9a-f]{32}$'),
    channel           text NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (verification_sid, attempt)
);
