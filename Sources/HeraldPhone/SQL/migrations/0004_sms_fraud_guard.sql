-- herald:legacy-version 16
-- The fraud guard: sends and verifications per region and number prefix in one-minute buckets, and pauses.

-- squawk-ignore-file prefer-bigint-over-int, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: sent and verified count one minute of a region or prefix (or the
--   window that tripped a pause), pauses the pauses of one scope.
-- why: require-lock-timeout, require-statement-timeout: every index is on a table created above in
--   this transaction: no other session can hold a lock on it or have written a row to it.

CREATE TABLE herald.sms_fraud_counts (
    scope     text NOT NULL CHECK (scope IN ('region','prefix')),
    key       text NOT NULL,
    minute    timestamptz NOT NULL,
    sent      integer NOT NULL DEFAULT 0,
    verified  integer NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, key, minute)
);
CREATE INDEX sms_fraud_counts_minute_idx ON herald.sms_fraud_counts (minute);

-- The scopes of each verification the guard let through (only those are counted).
CREATE TABLE herald.sms_fraud_marks (
    verification_id  text PRIMARY KEY,
    phone_number     text NOT NULL,
    region           text NOT NULL,
    prefix           text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_fraud_marks_created_idx ON herald.sms_fraud_marks (created_at);

-- One row per scope ever paused: paused (until expires_at, NULL: until lifted), lifted
-- (by whom, when; not paused again before grace_until) or expired.
CREATE TABLE herald.sms_fraud_pauses (
    scope        text NOT NULL CHECK (scope IN ('region','prefix')),
    key          text NOT NULL,
    state        text NOT NULL CHECK (state IN ('paused','lifted')),
    paused_at    timestamptz NOT NULL,
    expires_at   timestamptz,
    -- The window when it tripped.
    sent         integer NOT NULL,
    verified     integer NOT NULL,
    pauses       integer NOT NULL DEFAULT 1,
    lifted_at    timestamptz,
    lifted_by    text,
    grace_until  timestamptz,
    PRIMARY KEY (scope, key)
);

-- herald.fraud_guard_check was created here: now functions/fraud_guard_check.sql.
-- herald.fraud_guard_lift was created here: now functions/fraud_guard_lift.sql.
-- herald.fraud_guard_count was created here: now functions/fraud_guard_count.sql.
-- herald.fraud_guard_sent and its trigger sms_verifications_fraud_guard_sent were created here:
-- now functions/fraud_guard_sent.sql.
-- herald.fraud_guard_verified and its trigger sms_codes_fraud_guard_verified were created here:
-- now functions/fraud_guard_verified.sql.
