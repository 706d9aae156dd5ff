-- A scope's usual traffic (issue 46): the fraud guard's floor scales with it, so pausing a region
-- or prefix costs an attacker a multiple of what that scope verifies in a usual window, not the
-- fixed floor alone (functions/fraud_guard_floor.sql). One row per scope whose floor was read,
-- recomputed from herald.sms_fraud_counts at most once an hour; cleanup runs purge it with the
-- counts (cleanup.purge.sms_fraud_days).
-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: a new table, which nothing holds yet.
CREATE TABLE herald.sms_fraud_baselines (
    scope           text NOT NULL CHECK (scope IN ('region', 'prefix')),
    key             text NOT NULL,
    -- Codes verified in the day before the window, per window: what the scope's users verify.
    usual_verified  double precision NOT NULL,
    computed_at     timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX sms_fraud_baselines_computed_idx ON herald.sms_fraud_baselines (computed_at);
