-- What the fraud guard let through, kept per scope and minute (issue 48). herald.fraud_guard_let_through
-- counted a scope's marks of the window one by one, each with a look at its verification, up to
-- the floor: O(window) per request once a floor is large (a big country's region, or the bench's
-- 10^7: 73 jobs/s against 990 with the controls off, 25.6 ms of PostgreSQL CPU per job). Now each
-- mark adds one to its region's and its prefix's minute here, and its verification turning
-- reused, refused or failed (or back) takes it off (or adds it again): triggers keep the count
-- (functions/fraud_guard_let_through_marked.sql, functions/fraud_guard_let_through_outcome.sql),
-- and the guard reads a sum over the window's minutes, as it reads sms_fraud_counts.
-- Cleanup runs purge it with the counts (cleanup.purge.sms_fraud_days).
-- squawk-ignore-file require-lock-timeout, require-statement-timeout, prefer-bigint-over-int
-- why: require-lock-timeout, require-statement-timeout: a new table, which nothing holds yet; the
--   fill reads marks and verifications without locking them.
-- why: prefer-bigint-over-int: one minute of one region or prefix, as sms_fraud_counts.sent.
CREATE TABLE herald.sms_fraud_let_through (
    scope        text NOT NULL CHECK (scope IN ('region', 'prefix')),
    key          text NOT NULL,
    minute       timestamptz NOT NULL,
    -- Marks of this minute whose verification did not end reused, refused or failed.
    let_through  integer NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, key, minute)
);
CREATE INDEX sms_fraud_let_through_minute_idx ON herald.sms_fraud_let_through (minute);
-- Written on every job the guard lets through, as sms_fraud_counts (migration 0010).
ALTER TABLE herald.sms_fraud_let_through SET (autovacuum_analyze_threshold = 1000);

-- The marks of the last day (a window is at most 1440 minutes), counted as the guard counted them.
-- A mark written, or a verification changed, by a worker between this migration's commit and
-- the triggers' (the definitions, applied next by the same migrate) is not counted: a moment's
-- requests, for at most one window.
INSERT INTO herald.sms_fraud_let_through (scope, key, minute, let_through)
SELECT s.scope, s.key, date_trunc('minute', m.created_at), count(*)
  FROM herald.sms_fraud_marks m
 CROSS JOIN LATERAL (VALUES ('region', m.region), ('prefix', m.prefix)) AS s(scope, key)
 WHERE date_trunc('minute', m.created_at) > date_trunc('minute', now()) - interval '1 day'
   AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v
                    WHERE v.verification_id = m.verification_id AND v.state IN ('reused', 'refused', 'failed'))
 GROUP BY 1, 2, 3;
