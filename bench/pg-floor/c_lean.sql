-- (c_lean) c_controls.sql with Herald's PL/pgSQL triggers disabled (run.sh does it, and turns
-- them on again after): the same rows written, the fraud guard's send counts by this script's
-- own statement instead of the trigger on `sent`; the foreign key stays. Otherwise:
-- (c) Herald's floor with the abuse controls of `make bench`'s "controls on" run
-- (Sources/herald-bench/SMSControls.swift): b_herald.sql plus the region caps' two counters and
-- the fraud guard (its windows, pauses, known numbers and marks read; its marks, let-through
-- counts and, by the trigger on `sent`, its send counts written). App verification is off there,
-- so nothing of it here. Plain set-based SQL of ours on Herald's real tables, indexes,
-- partitions and triggers, in ONE transaction. One run of this script = one group = 16 jobs.
-- `-- @split` marks where Herald's guarantees need a commit (run.sh's *_split variants put
-- COMMIT; BEGIN; there): the decision commits before the provider call, the outcome after it,
-- and the relay claims its rows before publishing and deletes them after.
\set base random(1, 400000000000000000)
BEGIN;
-- The group's data (Herald's worker sends these as array parameters; g_data.sql measures this alone).
SELECT array_agg(m) AS mids, array_agg(v) AS vids, array_agg(t) AS toks, array_agg(p) AS phones,
       array_agg(left(p, 11)) AS pfx, array_agg(left(p, 8)) AS fpfx, array_agg(h) AS hashes,
       array_agg(encode(h, 'hex')) AS khash, array_agg(pm) AS pmids,
       array_agg('{"verification_id":"' || v || '","phone":"+49*******' || right(p, 3)
                 || '","purpose":"sign_in","provider":"webhook","provider_message_id":"' || pm
                 || '","segments":1,"encoding":"gsm7","channel":"sms"}') AS bodies
  FROM (SELECT 'b1a7e0c2-' || lpad(n::text, 27, '0') AS m, 'c2f9d3a4-' || lpad(n::text, 27, '0') AS v,
               'e5a1b7c9-' || lpad(n::text, 27, '0') AS t,
               '+4917' || lpad((((n % 1000000000) * 2654435761) % 1000000000)::text, 9, '0') AS p,
               sha256(int8send(n)) AS h, 'SM' || lpad(n::text, 32, '0') AS pm
          FROM (SELECT :base::bigint * 16 + g AS n FROM generate_series(1, 16) AS g) AS s) AS d \gset
-- 1. Claim (job ledger). The ledger is partitioned by day, so a message id's uniqueness is
--    held by a transaction advisory lock per id (in hash order), then a look in every day that
--    may hold it, in a new statement (its snapshot sees a claim that held the lock before).
SELECT count(x) FROM (SELECT pg_advisory_xact_lock(19026, h) AS x
                        FROM (SELECT DISTINCT hashtext(i) AS h FROM unnest(:mids::text[]) AS i) AS d ORDER BY h) AS l;
WITH claimed AS (
    INSERT INTO herald.job_runs (message_id, job_type, queue, status, attempts, owner_key, claim_token, lease_until)
    SELECT i.m, 'sms.verification', 'herald.sms', 'running', 1, 4242, i.t, now() + interval '300 seconds'
      FROM unnest(:mids::text[], :toks::text[]) AS i(m, t)
     WHERE NOT EXISTS (SELECT 1 FROM herald.job_runs j WHERE j.message_id = i.m AND j.created_at < now() + interval '1 hour')
     ORDER BY i.m
    RETURNING created_at)
SELECT max(created_at) AS cat FROM claimed \gset
-- F1. Fraud guard: each scope of the group once (the region, each prefix of 7 digits): its
--     window (sends, verifications, undelivered; let through) and its pause row.
SELECT s.scope, s.key, c.sent, c.verified, c.undelivered, l.let_through, p.state
  FROM (SELECT 'region' AS scope, 'DE' AS key UNION SELECT 'prefix', x FROM unnest(:fpfx::text[]) AS x) AS s
 CROSS JOIN LATERAL (SELECT coalesce(sum(n.sent), 0) AS sent, coalesce(sum(n.verified), 0) AS verified,
                            coalesce(sum(n.undelivered), 0) AS undelivered
                       FROM herald.sms_fraud_counts n
                      WHERE n.scope = s.scope AND n.key = s.key AND n.minute > date_trunc('minute', now()) - interval '60 minutes') AS c
 CROSS JOIN LATERAL (SELECT coalesce(sum(t.let_through), 0) AS let_through FROM herald.sms_fraud_let_through t
                      WHERE t.scope = s.scope AND t.key = s.key AND t.minute > date_trunc('minute', now()) - interval '60 minutes') AS l
  LEFT JOIN herald.sms_fraud_pauses p ON p.scope = s.scope AND p.key = s.key;
-- 2. Decide: each verification id new, no pending code for the number and purpose, the number
--    not locked for guessing; and for the guard, not marked before, the number not a known one.
--    (OFFSET 0 keeps each a correlated probe by key, as herald.sms_prepare_batch does.)
SELECT count(*) FROM unnest(:vids::text[], :phones::text[], :khash::text[]) AS r(v, p, k)
 WHERE EXISTS (SELECT 1 FROM herald.sms_verifications v WHERE v.verification_id = r.v OFFSET 0)
    OR EXISTS (SELECT 1 FROM herald.sms_codes c WHERE c.phone_number = r.p AND c.purpose = 'sign_in' AND c.status = 'pending' OFFSET 0)
    OR EXISTS (SELECT 1 FROM herald.sms_guess_failures g WHERE g.phone_number = r.p AND g.locked_until > now() OFFSET 0)
    OR EXISTS (SELECT 1 FROM herald.sms_fraud_marks m WHERE m.verification_id = r.v OFFSET 0)
    OR EXISTS (SELECT 1 FROM herald.sms_known_numbers n WHERE n.number_hash = r.k OFFSET 0);
-- F2. Fraud guard: each verification marked (its region and prefix), and the group's marks
--     added to the let-through count once, region first then prefixes in key order.
WITH marked AS (
    INSERT INTO herald.sms_fraud_marks (verification_id, phone_number, region, prefix)
    SELECT i.v, i.p, 'DE', i.f FROM unnest(:vids::text[], :phones::text[], :fpfx::text[]) AS i(v, p, f)
    RETURNING region, prefix)
INSERT INTO herald.sms_fraud_let_through AS c (scope, key, minute, let_through)
SELECT s.scope, s.key, date_trunc('minute', now()), count(*)
  FROM marked CROSS JOIN LATERAL (VALUES ('region', marked.region), ('prefix', marked.prefix)) AS s(scope, key)
 GROUP BY 1, 2 ORDER BY s.scope = 'prefix', s.key
ON CONFLICT (scope, key, minute) DO UPDATE SET let_through = c.let_through + EXCLUDED.let_through;
-- 3. Rate limits: every counter of the group once, in key order (per number, per prefix of the
--    number less 3 digits, the global counter's shard of this transaction, and the region caps'
--    region_hour and region_day of DE), in its current bucket (a tenth of the window).
INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
SELECT l.scope, l.key, to_timestamp(floor(extract(epoch FROM now()) / l.b) * l.b), count(*),
       to_timestamp(floor(extract(epoch FROM now()) / l.b) * l.b) + make_interval(secs => l.b + l.w)
  FROM (SELECT 'phone' AS scope, p AS key, 3600 AS w, 360 AS b FROM unnest(:phones::text[]) AS p
        UNION ALL SELECT 'prefix', x, 3600, 360 FROM unnest(:pfx::text[]) AS x
        UNION ALL SELECT 'global', 'shard-3600-' || mod(txid_current(), 16), 3600, 360 FROM generate_series(1, 16)
        UNION ALL SELECT 'region_hour', 'DE', 3600, 360 FROM generate_series(1, 16)
        UNION ALL SELECT 'region_day', 'DE', 86400, 8640 FROM generate_series(1, 16)) AS l
 GROUP BY l.scope, l.key, l.w, l.b ORDER BY 1, 2, 3
ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count + EXCLUDED.count;
--    ... judged over each counter's sliding window (the global one: all 16 shards), each
--    counter's buckets read by scope and key (equality on both) and its window's time range.
SELECT coalesce(bool_or(w.n > 100000000), false) FROM (
    SELECT k.scope, k.counter, sum(e.n) AS n
      FROM (SELECT 'phone' AS scope, p AS counter, p AS key, 3600 AS w, 360 AS b FROM unnest(:phones::text[]) AS p
            UNION ALL SELECT 'prefix', x, x, 3600, 360 FROM unnest(:pfx::text[]) AS x
            UNION ALL SELECT 'global', '', 'shard-3600-' || g, 3600, 360 FROM generate_series(0, 15) AS g
            UNION ALL SELECT 'region_hour', 'DE', 'DE', 3600, 360
            UNION ALL SELECT 'region_day', 'DE', 'DE', 86400, 8640) AS k
     CROSS JOIN LATERAL (SELECT coalesce(sum(e.count), 0) AS n FROM herald.sms_rate_counters e
                          WHERE e.scope = k.scope AND e.key = k.key
                            AND e.window_start > now() - make_interval(secs => k.w + k.b) AND e.window_start <= now()) AS e
     GROUP BY k.scope, k.counter) AS w;
-- 4. The codes (one pending per number and purpose: the partial unique index) and the
--    verifications, `sending` (foreign key to the code).
WITH code AS (
    INSERT INTO herald.sms_codes (phone_number, purpose, tenant, status, key_id, code_hash, max_attempts, test_number, expires_at,
                                  last_sent_at, sends, guess_limit, guess_window_seconds, lockout_seconds, lockout_max_seconds)
    SELECT i.p, 'sign_in', '', 'pending', 'dev1', i.h, 5, false, now() + interval '600 seconds', now(), 1, 10, 86400, 3600, 86400
      FROM unnest(:phones::text[], :hashes::bytea[]) AS i(p, h) ORDER BY i.p
    ON CONFLICT (phone_number, purpose, tenant) WHERE status = 'pending' DO NOTHING
    RETURNING id, phone_number)
INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends, owner_key)
SELECT i.v, code.id, i.p, 'sign_in', i.m, 'sending', 1, 4242
  FROM unnest(:vids::text[], :phones::text[], :mids::text[]) AS i(v, p, m) JOIN code ON code.phone_number = i.p;
-- @split
-- (the provider calls)
-- 5. Sent: the verifications `sent` (only those still `sending`) and their provider calls; the
--    guard's sends counted (region and prefix, this minute), one upsert per scope.
WITH v AS (
    UPDATE herald.sms_verifications s
       SET state = 'sent', reason = NULL, provider = 'webhook', provider_message_id = i.pm, segments = 1, encoding = 'gsm7',
           uncertain_sends = s.uncertain_sends + 0, channel = 'sms', updated_at = now()
      FROM unnest(:vids::text[], :pmids::text[], :fpfx::text[]) AS i(v, pm, f)
     WHERE s.verification_id = i.v AND s.state = 'sending'
    RETURNING s.verification_id, i.pm, i.f
), attempts AS (
    INSERT INTO herald.sms_send_attempts (verification_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.verification_id, 'webhook', 'accepted', 200, NULL, v.pm, 3 FROM v)
INSERT INTO herald.sms_fraud_counts AS c (scope, key, minute, sent, verified)
SELECT s.scope, s.key, date_trunc('minute', now()), count(*), 0
  FROM v CROSS JOIN LATERAL (VALUES ('region', 'DE'), ('prefix', v.f)) AS s(scope, key)
 GROUP BY 1, 2 ORDER BY 1, 2
ON CONFLICT (scope, key, minute) DO UPDATE SET sent = c.sent + EXCLUDED.sent;
-- 6. The outcomes in the ledger (by the claim's day: no look in every day) and the sms.sent
--    events into the outbox.
WITH finished AS (
    UPDATE herald.job_runs j
       SET status = 'completed', reason = NULL, finished_at = now(), updated_at = now(), lease_until = NULL, owner_key = NULL
      FROM unnest(:mids::text[]) AS u(m)
     WHERE j.message_id = u.m AND j.created_at = :cat::timestamptz
), events AS (
    INSERT INTO herald.event_outbox (exchange, name, message_id, body)
    SELECT 'herald.events', 'sms.sent', e.m, e.b FROM unnest(:mids::text[], :bodies::text[]) AS e(m, b)
    RETURNING id, created_at)
SELECT array_agg(id) AS eids, max(created_at) AS ecat FROM events \gset
-- @split
-- 7. The relay: claims its rows (no transaction open while it publishes), then deletes what
--    the broker confirmed (by id and day).
UPDATE herald.event_outbox e SET claimed_until = now() + interval '31 seconds'
 WHERE e.id = ANY (:eids::bigint[]) AND e.created_at = :ecat::timestamptz
   AND (e.claimed_until IS NULL OR e.claimed_until < now())
RETURNING e.id, e.name, e.message_id, e.body, e.created_at;
-- @split
DELETE FROM herald.event_outbox WHERE id = ANY (:eids::bigint[]) AND created_at = :ecat::timestamptz;
COMMIT;
