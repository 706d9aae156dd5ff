-- legacy-v29.sql: a FROZEN fixture of a Herald database as the old code left it.
--
-- What it is: a complete database (schema `herald` with its 28 tables, 21 functions and 4
-- triggers, and the old ledger public.herald_schema_migrations) as Herald's old
-- single-sequence migrator left it at versions 1-29 (13 and 20 were never shipped, so the
-- ledger holds 27 rows), with a few realistic rows in every herald table (cleanup_policy
-- is a singleton: one row). Dumped with pg_dump 15 (15.18) on 2026-11-27, plain format,
-- default options: schema and data, owners (herald, herald_migrate) and privileges
-- (herald_worker) kept, no --clean.
--
-- FROZEN: never regenerate or edit this file. It stands for the databases in the field
-- that the new migrator must upgrade without losing a row; a fresh dump from today's code
-- would prove nothing. If the old schema ever needs another shape, add another fixture.
--
-- How it was made:
--   1. CREATE DATABASE fixture_work TEMPLATE herald_legacy, herald_legacy being a database
--      migrated by the old code (migrations 1-29 of the old single sequence).
--   2. Rows were written the way Herald's workers and front API write them: mostly through
--      Herald's own functions (sms_prepare, fraud_guard_check/count/lift, sms_guess_failed,
--      email_prepare, email_use_code, push_prepare, push_receipt_consume, apple_prepare)
--      and the UPDATEs the workers run after a provider answers, plain INSERTs elsewhere
--      (accounts, account_providers, apple_tokens, apple_notifications, relay addresses,
--      cleanup_runs, job_runs, event_outbox, dev_outbox, *_attempts). Every CHECK, foreign
--      key and trigger was live: linking a provider upgraded the anonymous accounts
--      (account_providers_upgrade), deleting an Apple-linked account enqueued apple.revoke
--      (accounts_apple_revoke), sent/verified SMS fed sms_fraud_counts (fraud guard
--      triggers). Timestamps are from November 2026.
--   3. No secret in clear: SMS/email codes, push secrets and relay addresses are stored
--      only as 32-byte digests (SHA-256 of fixture-only strings, standing for the
--      HMAC-SHA256 Herald stores) with a key id; device tokens and Apple authorization
--      codes as hex SHA-256; Apple refresh tokens as opaque sealed bytes (12-byte nonce,
--      16-byte tag). Phone numbers are E.164 from fictional/reserved ranges, addresses are
--      example.com/.org/.net.
--   4. pg_dump "postgres://herald@127.0.0.1:55432/fixture_work" > (this file, below this header)
--
-- Restore with psql (it uses COPY ... FROM stdin and psql's \restrict), into an empty
-- database of a cluster that has the roles herald, herald_migrate and herald_worker:
--   psql -v ON_ERROR_STOP=1 -q -f legacy-v29.sql "postgres://.../<empty database>"
--
--
-- PostgreSQL database dump
--

\restrict eYg7nsvfkiGhnikVyoXozxKau0lvN30V5c5Hkp88zKd2jYDB7U4fMkrTOqDgfCT

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: herald; Type: SCHEMA; Schema: -; Owner: herald_migrate
--

CREATE SCHEMA herald;


ALTER SCHEMA herald OWNER TO herald_migrate;

--
-- Name: account_provider_linked(); Type: FUNCTION; Schema: herald; Owner: herald_migrate
--

CREATE FUNCTION herald.account_provider_linked() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN UPDATE herald.accounts SET is_anonymous = false, upgraded_at = coalesce(upgraded_at, now()), delete_after = NULL WHERE id = NEW.account_id AND is_anonymous; RETURN NEW; END $$;


ALTER FUNCTION herald.account_provider_linked() OWNER TO herald_migrate;

--
-- Name: apple_exhausted(text, text, text, text, text); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.apple_exhausted(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_reason text) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    job herald.apple_jobs%ROWTYPE;
BEGIN
    SELECT * INTO job FROM herald.apple_jobs WHERE message_id = p_message_id FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO herald.apple_jobs (message_id, operation, account_id, client_id, state, reason)
        VALUES (p_message_id, p_operation, p_account_id, p_client_id, 'failed', p_reason);
        RETURN true;
    END IF;
    IF job.operation <> p_operation OR job.account_id <> p_account_id OR job.client_id <> p_client_id
       OR job.state NOT IN ('calling', 'retrying')
       OR (job.state = 'calling' AND job.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(job.owner_key)) THEN
        RETURN false;
    END IF;
    UPDATE herald.apple_jobs SET state = 'failed', owner_key = NULL, reason = p_reason, updated_at = now()
     WHERE message_id = p_message_id;
    RETURN true;
END
$$;


ALTER FUNCTION herald.apple_exhausted(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_reason text) OWNER TO herald;

--
-- Name: apple_prepare(text, text, text, text, text, text, bigint); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.apple_prepare(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_code_hash text, p_step text, p_owner_key bigint) RETURNS TABLE(o_decision text, o_reason text, o_uncertain boolean)
    LANGUAGE plpgsql
    AS $$
DECLARE
    job herald.apple_jobs%ROWTYPE;
    uncertain boolean := false;
    mismatch text;
BEGIN
    SELECT * INTO job FROM herald.apple_jobs WHERE message_id = p_message_id FOR UPDATE;
    IF FOUND THEN
        mismatch := CASE WHEN job.operation <> p_operation THEN 'operation'
                         WHEN job.account_id <> p_account_id THEN 'account_id'
                         WHEN job.client_id <> p_client_id THEN 'client_id' END;
        IF mismatch IS NOT NULL THEN
            RETURN QUERY SELECT 'invalid'::text, 'message_id reused with a different ' || mismatch, false;
            RETURN;
        END IF;
        IF job.state NOT IN ('calling', 'retrying') THEN
            RETURN QUERY SELECT 'done'::text, job.state, false;
            RETURN;
        END IF;
        IF job.state = 'calling' THEN
            IF job.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(job.owner_key) THEN
                RETURN QUERY SELECT 'busy'::text, NULL::text, false;
                RETURN;
            END IF;
            IF job.step = 'exchange' THEN
                UPDATE herald.apple_jobs
                   SET state = 'uncertain', owner_key = NULL, uncertain_calls = uncertain_calls + 1, error = 'exchange_uncertain',
                       reason = 'exchange_uncertain: an earlier try sent the authorization code to Apple and stopped before '
                             || 'recording the answer; codes are single use, so it is not sent again',
                       updated_at = now()
                 WHERE message_id = p_message_id;
                RETURN QUERY SELECT 'uncertain'::text, 'exchange_uncertain'::text, true;
                RETURN;
            END IF;
            uncertain := true;
        END IF;
    ELSIF p_step = 'exchange' AND EXISTS (SELECT 1 FROM herald.apple_jobs WHERE code_hash = p_code_hash) THEN
        INSERT INTO herald.apple_jobs (message_id, operation, account_id, client_id, state, error, reason)
        VALUES (p_message_id, p_operation, p_account_id, p_client_id, 'failed', 'authorization_code_reused',
                'authorization_code_reused: another job exchanged this code');
        RETURN QUERY SELECT 'refused'::text, 'authorization_code_reused'::text, false;
        RETURN;
    END IF;
    IF p_step IS NULL THEN
        INSERT INTO herald.apple_jobs (message_id, operation, account_id, client_id, state, reason)
        VALUES (p_message_id, p_operation, p_account_id, p_client_id, 'nothing',
                'nothing_to_revoke: no refresh token is stored and the job gave no authorization_code')
        ON CONFLICT (message_id) DO UPDATE SET state = 'nothing', step = NULL, owner_key = NULL,
                reason = EXCLUDED.reason, updated_at = now();
        RETURN QUERY SELECT 'nothing'::text, 'nothing_to_revoke'::text, false;
        RETURN;
    END IF;
    INSERT INTO herald.apple_jobs (message_id, operation, account_id, client_id, code_hash, state, step, owner_key, calls)
    VALUES (p_message_id, p_operation, p_account_id, p_client_id,
            CASE WHEN p_step = 'exchange' THEN p_code_hash END, 'calling', p_step, p_owner_key, 1)
    ON CONFLICT (message_id) DO UPDATE SET state = 'calling', step = p_step, owner_key = p_owner_key,
            code_hash = coalesce(herald.apple_jobs.code_hash, EXCLUDED.code_hash),
            calls = herald.apple_jobs.calls + 1,
            uncertain_calls = herald.apple_jobs.uncertain_calls + CASE WHEN uncertain THEN 1 ELSE 0 END,
            error = NULL, reason = NULL, updated_at = now();
    RETURN QUERY SELECT 'call'::text, NULL::text, uncertain;
END
$$;


ALTER FUNCTION herald.apple_prepare(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_code_hash text, p_step text, p_owner_key bigint) OWNER TO herald;

--
-- Name: apple_revoke_deleted_accounts(); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.apple_revoke_deleted_accounts() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO herald.event_outbox (exchange, name, message_id, body)
    SELECT t.jobs_exchange, 'apple.revoke', gen_random_uuid()::text,
           json_build_object('version', 1, 'account_id', t.account_id, 'client_id', t.client_id)::text
      FROM deleted d JOIN herald.apple_tokens t ON t.account_id = d.id;
    RETURN NULL;
END
$$;


ALTER FUNCTION herald.apple_revoke_deleted_accounts() OWNER TO herald;

--
-- Name: email_prepare(text, text, text, text, text, bigint, text, bytea, jsonb, integer, text, text, text, text[], text[], integer[], integer[]); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.email_prepare(p_request_id text, p_message_id text, p_email text, p_mode text, p_state text, p_owner_key bigint, p_key_id text, p_code_hash bytea, p_settings jsonb, p_expires_seconds integer, p_paired_email text, p_recovery_job text, p_recovery_exchange text, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[]) RETURNS TABLE(o_decision text, o_state text, o_uncertain boolean, o_reason text)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    v_row herald.email_requests;
    v_owner_gone boolean;
    v_uncertain boolean := false;
    v_refused text;
BEGIN
    INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, owner_key,
                                       paired_email, recovery_job, recovery_exchange)
    SELECT p_request_id, p_message_id, p_email, p_mode, p_state, p_owner_key,
           p_paired_email, p_recovery_job, p_recovery_exchange
     WHERE p_mode <> 'recover_email'
    ON CONFLICT (request_id) DO NOTHING;
    IF FOUND THEN
        v_refused := herald.email_rate_take(p_scopes, p_keys, p_windows, p_maxes, now());
        IF v_refused IS NOT NULL THEN
            UPDATE herald.email_requests SET state = 'failed', reason = 'rate_limited:' || v_refused, owner_key = NULL
             WHERE request_id = p_request_id;
            RETURN QUERY SELECT 'refused'::text, 'failed'::text, false, 'rate_limited:' || v_refused;
            RETURN;
        END IF;
    ELSE
        SELECT * INTO v_row FROM herald.email_requests r WHERE r.request_id = p_request_id FOR UPDATE;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'invalid'::text, NULL::text, false, 'mode: recover_email is enqueued by Herald only'::text;
            RETURN;
        ELSIF v_row.email <> p_email THEN
            RETURN QUERY SELECT 'invalid'::text, v_row.state, false, 'request_id was used with another email'::text;
            RETURN;
        ELSIF v_row.mode <> p_mode THEN
            RETURN QUERY SELECT 'invalid'::text, v_row.state, false, 'request_id was used with another mode'::text;
            RETURN;
        ELSIF p_mode = 'verify_and_change_email' AND v_row.paired_email IS DISTINCT FROM p_paired_email THEN
            RETURN QUERY SELECT 'invalid'::text, v_row.state, false, 'request_id was used with another old_email'::text;
            RETURN;
        END IF;
        v_owner_gone := v_row.owner_key IS NULL OR (v_row.owner_key = p_owner_key AND v_row.message_id = p_message_id)
                        OR pg_try_advisory_xact_lock_shared(v_row.owner_key);
        IF v_row.state = 'sending' AND NOT v_owner_gone THEN
            RETURN QUERY SELECT 'busy'::text, v_row.state, false, NULL::text;
            RETURN;
        ELSIF v_row.state = 'sending' THEN
            v_uncertain := true;
        ELSIF v_row.state NOT IN ('retrying', 'queued') THEN
            RETURN QUERY SELECT 'done'::text, v_row.state, false, NULL::text;
            RETURN;
        END IF;
        UPDATE herald.email_codes SET status = 'superseded' WHERE request_id = p_request_id AND status = 'pending';
        UPDATE herald.email_requests
           SET state = p_state, owner_key = p_owner_key, message_id = p_message_id,
               uncertain_sends = uncertain_sends + v_uncertain::int, updated_at = now()
         WHERE request_id = p_request_id;
    END IF;
    IF p_code_hash IS NOT NULL THEN
        IF p_mode = 'reset_password' THEN
            UPDATE herald.email_codes SET status = 'superseded'
             WHERE email = p_email AND mode = 'reset_password' AND status = 'pending';
        END IF;
        INSERT INTO herald.email_codes (request_id, email, mode, key_id, code_hash, settings, status, expires_at)
        VALUES (p_request_id, p_email, p_mode, p_key_id, p_code_hash, p_settings, 'pending',
                now() + make_interval(secs => p_expires_seconds));
    END IF;
    RETURN QUERY SELECT 'send'::text, p_state, v_uncertain, NULL::text;
END
$$;


ALTER FUNCTION herald.email_prepare(p_request_id text, p_message_id text, p_email text, p_mode text, p_state text, p_owner_key bigint, p_key_id text, p_code_hash bytea, p_settings jsonb, p_expires_seconds integer, p_paired_email text, p_recovery_job text, p_recovery_exchange text, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[]) OWNER TO herald;

--
-- Name: email_rate_take(text[], text[], integer[], integer[], timestamp with time zone); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.email_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    v_refused text;
    v_scopes text[];
    v_keys text[];
    v_starts timestamptz[];
    v_order bigint[];
    v_counts integer[];
    v_maxes integer[];
    v_windows integer[];
    v_buckets integer[];
BEGIN
    IF coalesce(array_length(p_scopes, 1), 0) = 0 THEN
        RETURN NULL;
    END IF;
    WITH wanted AS MATERIALIZED (
        SELECT u.i, u.scope, u.max, u.window_seconds, greatest(u.window_seconds / 10, 1) AS bucket,
               CASE WHEN u.scope = 'global' THEN 'shard-' || u.window_seconds || '-' || floor(random() * 16)::int
                    ELSE u.key END AS key
          FROM unnest(p_scopes, p_keys, p_windows, p_maxes) WITH ORDINALITY AS u(scope, key, window_seconds, max, i)
    ), located AS MATERIALIZED (
        SELECT w.*, to_timestamp(floor(extract(epoch FROM p_now) / w.bucket) * w.bucket) AS bucket_start FROM wanted w
    ), counted AS (
        INSERT INTO herald.email_rate_counters AS r (scope, key, window_start, count, expires_at)
        SELECT l.scope, l.key, l.bucket_start, 1, l.bucket_start + make_interval(secs => l.bucket + l.window_seconds)
          FROM located l ORDER BY l.scope, l.key
        ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count + 1
        RETURNING r.scope, r.key, r.window_start, r.count
    )
    SELECT array_agg(l.i), array_agg(l.scope), array_agg(l.key), array_agg(l.bucket_start), array_agg(c.count),
           array_agg(l.max), array_agg(l.window_seconds), array_agg(l.bucket)
      INTO v_order, v_scopes, v_keys, v_starts, v_counts, v_maxes, v_windows, v_buckets
      FROM located l
      JOIN counted c ON c.scope = l.scope AND c.key = l.key AND c.window_start = l.bucket_start;
    SELECT (array_agg(u.scope ORDER BY u.i) FILTER (WHERE u.count + coalesce(earlier.n, 0) > u.max))[1]
      INTO v_refused
      FROM unnest(v_order, v_scopes, v_keys, v_starts, v_counts, v_maxes, v_windows, v_buckets)
           AS u(i, scope, key, bucket_start, count, max, window_seconds, bucket)
      LEFT JOIN LATERAL (
          SELECT sum(e.count) AS n FROM herald.email_rate_counters e
           WHERE e.scope = u.scope
             AND e.key = ANY (CASE WHEN u.scope = 'global'
                                   THEN ARRAY(SELECT 'shard-' || u.window_seconds || '-' || g FROM generate_series(0, 15) g)
                                   ELSE ARRAY[u.key] END)
             AND e.window_start > p_now - make_interval(secs => u.window_seconds + u.bucket)
             AND e.window_start <= p_now
             AND NOT (e.key = u.key AND e.window_start = u.bucket_start)
      ) earlier ON true;
    IF v_refused IS NOT NULL THEN
        UPDATE herald.email_rate_counters r SET count = r.count - 1
          FROM unnest(v_scopes, v_keys, v_starts) AS u(scope, key, window_start)
         WHERE r.scope = u.scope AND r.key = u.key AND r.window_start = u.window_start;
    END IF;
    RETURN v_refused;
END;
$$;


ALTER FUNCTION herald.email_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone) OWNER TO herald;

--
-- Name: email_use_code(bigint); Type: FUNCTION; Schema: herald; Owner: herald_migrate
--

CREATE FUNCTION herald.email_use_code(p_id bigint) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    v_code herald.email_codes;
    v_request herald.email_requests;
    v_recovery_id text;
BEGIN
    UPDATE herald.email_codes SET status = 'used', used_at = now()
     WHERE id = p_id AND status = 'pending' RETURNING * INTO v_code;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'email code % is not pending', p_id;
    END IF;
    UPDATE herald.email_codes SET status = 'superseded'
     WHERE email = v_code.email AND mode = v_code.mode AND status = 'pending';
    SELECT * INTO v_request FROM herald.email_requests WHERE request_id = v_code.request_id;
    IF v_code.mode = 'verify_and_change_email' AND v_request.recovery_job IS NOT NULL THEN
        v_recovery_id := v_request.recovery_job::jsonb ->> 'request_id';
        INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, paired_email)
        VALUES (v_recovery_id, v_recovery_id, v_request.paired_email, 'recover_email', 'queued', v_code.email)
        ON CONFLICT (request_id) DO NOTHING;
        IF FOUND THEN
            INSERT INTO herald.event_outbox (exchange, name, message_id, body)
            VALUES (v_request.recovery_exchange, 'email.action', v_recovery_id, v_request.recovery_job);
        END IF;
    END IF;
    RETURN v_request.paired_email;
END
$$;


ALTER FUNCTION herald.email_use_code(p_id bigint) OWNER TO herald_migrate;

--
-- Name: fraud_guard_check(text, text, text, text, integer, integer, integer, double precision, integer); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer) RETURNS TABLE(o_scope text, o_key text, o_new boolean, o_sent bigint, o_verified bigint)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    scopes text[] := ARRAY['region', 'prefix'];
    keys text[] := ARRAY[p_region, p_prefix];
    floors integer[] := ARRAY[p_region_floor, p_prefix_floor];
    pause herald.sms_fraud_pauses%ROWTYPE;
    n_sent bigint;
    n_verified bigint;
    is_new boolean;
BEGIN
    IF EXISTS (SELECT 1 FROM herald.sms_verifications WHERE verification_id = p_verification_id) THEN
        RETURN;
    END IF;
    FOR i IN 1 .. 2 LOOP
        CONTINUE WHEN floors[i] <= 0;
        SELECT * INTO pause FROM herald.sms_fraud_pauses WHERE scope = scopes[i] AND key = keys[i];
        IF FOUND THEN
            IF pause.state = 'paused' AND (pause.expires_at IS NULL OR pause.expires_at > now()) THEN
                RETURN QUERY SELECT scopes[i], keys[i], false, pause.sent::bigint, pause.verified::bigint;
                RETURN;
            END IF;
            CONTINUE WHEN pause.state = 'lifted' AND pause.grace_until > now();
        END IF;
        SELECT coalesce(sum(sent), 0), coalesce(sum(verified), 0) INTO n_sent, n_verified
          FROM herald.sms_fraud_counts
         WHERE scope = scopes[i] AND key = keys[i]
           AND minute > date_trunc('minute', now()) - make_interval(mins => p_window_minutes);
        IF n_sent >= floors[i] AND n_verified < p_min_conversion * n_sent THEN
            is_new := NULL;
            INSERT INTO herald.sms_fraud_pauses AS f (scope, key, state, paused_at, expires_at, sent, verified)
            VALUES (scopes[i], keys[i], 'paused', now(),
                    CASE WHEN p_pause_seconds > 0 THEN now() + make_interval(secs => p_pause_seconds) END, n_sent, n_verified)
            ON CONFLICT (scope, key) DO UPDATE
               SET state = 'paused', paused_at = now(), expires_at = EXCLUDED.expires_at, sent = EXCLUDED.sent,
                   verified = EXCLUDED.verified, pauses = f.pauses + 1, lifted_at = NULL, lifted_by = NULL, grace_until = NULL
             WHERE f.state <> 'paused' OR (f.expires_at IS NOT NULL AND f.expires_at <= now())
            RETURNING true INTO is_new;
            RETURN QUERY SELECT scopes[i], keys[i], coalesce(is_new, false), n_sent, n_verified;
            RETURN;
        END IF;
    END LOOP;
    INSERT INTO herald.sms_fraud_marks (verification_id, phone_number, region, prefix)
    VALUES (p_verification_id, p_phone, p_region, p_prefix)
    ON CONFLICT (verification_id) DO UPDATE SET region = EXCLUDED.region, prefix = EXCLUDED.prefix;
    IF random() < 0.01 THEN
        DELETE FROM herald.sms_fraud_counts WHERE minute < now() - interval '25 hours';
        DELETE FROM herald.sms_fraud_marks WHERE created_at < now() - interval '2 days';
    END IF;
END;
$$;


ALTER FUNCTION herald.fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer) OWNER TO herald;

--
-- Name: fraud_guard_count(text, text, integer, integer); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.fraud_guard_count(p_region text, p_prefix text, p_sent integer, p_verified integer) RETURNS void
    LANGUAGE sql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
    INSERT INTO herald.sms_fraud_counts AS c (scope, key, minute, sent, verified)
    VALUES ('region', p_region, date_trunc('minute', now()), p_sent, p_verified),
           ('prefix', p_prefix, date_trunc('minute', now()), p_sent, p_verified)
    ON CONFLICT (scope, key, minute) DO UPDATE SET sent = c.sent + EXCLUDED.sent, verified = c.verified + EXCLUDED.verified;
$$;


ALTER FUNCTION herald.fraud_guard_count(p_region text, p_prefix text, p_sent integer, p_verified integer) OWNER TO herald;

--
-- Name: fraud_guard_lift(text, text, text, integer); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.fraud_guard_lift(p_scope text, p_key text, p_by text, p_grace_seconds integer) RETURNS boolean
    LANGUAGE sql
    AS $$
    WITH lifted AS (
        UPDATE herald.sms_fraud_pauses
           SET state = 'lifted', lifted_at = now(), lifted_by = p_by, grace_until = now() + make_interval(secs => p_grace_seconds)
         WHERE scope = p_scope AND key = p_key AND state = 'paused'
        RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM lifted);
$$;


ALTER FUNCTION herald.fraud_guard_lift(p_scope text, p_key text, p_by text, p_grace_seconds integer) OWNER TO herald;

--
-- Name: fraud_guard_sent(); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.fraud_guard_sent() RETURNS trigger
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
BEGIN
    INSERT INTO herald.sms_fraud_counts AS c (scope, key, minute, sent, verified)
    SELECT s.scope, s.key, date_trunc('minute', now()), count(*), 0
      FROM sent_after n
      JOIN sent_before o ON o.verification_id = n.verification_id
      JOIN herald.sms_fraud_marks m ON m.verification_id = n.verification_id
      CROSS JOIN LATERAL (VALUES ('region', m.region), ('prefix', m.prefix)) AS s(scope, key)
     WHERE n.state = 'sent' AND o.state IS DISTINCT FROM 'sent'
     GROUP BY s.scope, s.key
     ORDER BY s.scope, s.key
    ON CONFLICT (scope, key, minute) DO UPDATE SET sent = c.sent + EXCLUDED.sent;
    RETURN NULL;
END;
$$;


ALTER FUNCTION herald.fraud_guard_sent() OWNER TO herald;

--
-- Name: fraud_guard_verified(); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.fraud_guard_verified() RETURNS trigger
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    m_region text;
    m_prefix text;
BEGIN
    SELECT m.region, m.prefix INTO m_region, m_prefix
      FROM herald.sms_verifications v JOIN herald.sms_fraud_marks m USING (verification_id)
     WHERE v.code_id = NEW.id AND v.state = 'sent'
     ORDER BY m.created_at DESC LIMIT 1;
    IF FOUND THEN
        PERFORM herald.fraud_guard_count(m_region, m_prefix, 0, 1);
    END IF;
    RETURN NULL;
END;
$$;


ALTER FUNCTION herald.fraud_guard_verified() OWNER TO herald;

--
-- Name: push_exhausted(text, text, text, text, text, text, text); Type: FUNCTION; Schema: herald; Owner: herald_migrate
--

CREATE FUNCTION herald.push_exhausted(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_reason text) RETURNS boolean
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    ver herald.push_verifications%ROWTYPE;
BEGIN
    SELECT * INTO ver FROM herald.push_verifications WHERE receipt = p_receipt FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO herald.push_verifications (receipt, message_id, platform, environment, app_id, token_hash, state, secret_status, expires_at, reason)
        VALUES (p_receipt, p_message_id, p_platform, p_environment, p_app_id, p_token_hash, 'failed', 'void', now(), p_reason);
        RETURN true;
    END IF;
    IF ver.token_hash <> p_token_hash OR ver.environment <> p_environment OR ver.app_id <> p_app_id
       OR ver.state NOT IN ('sending', 'retrying')
       OR (ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key)) THEN
        RETURN false;
    END IF;
    UPDATE herald.push_verifications SET state = 'failed', secret_status = 'void', secret_hash = NULL, reason = p_reason, updated_at = now()
     WHERE receipt = p_receipt;
    RETURN true;
END;
$$;


ALTER FUNCTION herald.push_exhausted(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_reason text) OWNER TO herald_migrate;

--
-- Name: push_prepare(text, text, text, text, text, text, text, text, bytea, integer, integer, integer, bigint); Type: FUNCTION; Schema: herald; Owner: herald_migrate
--

CREATE FUNCTION herald.push_prepare(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_token_hint text, p_key_id text, p_secret_hash bytea, p_ttl_seconds integer, p_rate_max integer, p_rate_window_seconds integer, p_owner_key bigint) RETURNS TABLE(o_decision text, o_reason text, o_uncertain boolean)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    ver herald.push_verifications%ROWTYPE;
    tok herald.device_tokens%ROWTYPE;
    is_new boolean;
    uncertain boolean := false;
    refusal text;
BEGIN
    SELECT * INTO ver FROM herald.push_verifications WHERE receipt = p_receipt FOR UPDATE;
    is_new := NOT FOUND;
    IF NOT is_new THEN
        refusal := CASE
            WHEN ver.platform <> p_platform THEN 'platform'
            WHEN ver.token_hash <> p_token_hash THEN 'device_token'
            WHEN ver.environment <> p_environment THEN 'environment'
            WHEN ver.app_id <> p_app_id THEN 'app_id' END;
        IF refusal IS NOT NULL THEN
            RETURN QUERY SELECT 'invalid'::text, 'receipt reused with a different ' || refusal, false;
            RETURN;
        END IF;
        IF ver.state NOT IN ('sending', 'retrying') THEN
            RETURN QUERY SELECT 'done'::text, ver.state, false;
            RETURN;
        END IF;
        IF ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key) THEN
            RETURN QUERY SELECT 'busy'::text, NULL::text, false;
            RETURN;
        END IF;
        uncertain := ver.state = 'sending';
    END IF;
    INSERT INTO herald.device_tokens (token_hash, platform, token_hint, app_id, environment)
    VALUES (p_token_hash, p_platform, p_token_hint, p_app_id, p_environment)
    ON CONFLICT (token_hash) DO UPDATE SET updated_at = now();
    SELECT * INTO tok FROM herald.device_tokens WHERE token_hash = p_token_hash FOR UPDATE;
    IF tok.status = 'invalid' AND (tok.reason IS DISTINCT FROM 'bad_device_token' OR tok.environment = p_environment) THEN
        refusal := 'token_invalid';
    ELSIF is_new AND p_rate_max > 0 THEN
        IF tok.window_start IS NULL OR tok.window_start + make_interval(secs => p_rate_window_seconds) <= now() THEN
            tok.window_start := now();
            tok.window_count := 0;
        END IF;
        IF tok.window_count >= p_rate_max THEN
            refusal := 'rate_limited:device';
        ELSE
            UPDATE herald.device_tokens SET window_start = tok.window_start, window_count = tok.window_count + 1
             WHERE token_hash = p_token_hash;
        END IF;
    END IF;
    IF refusal IS NULL THEN
        UPDATE herald.device_tokens SET app_id = p_app_id, environment = p_environment WHERE token_hash = p_token_hash;
    END IF;
    IF refusal IS NOT NULL THEN
        INSERT INTO herald.push_verifications (receipt, message_id, platform, environment, app_id, token_hash, state, secret_status, expires_at, reason)
        VALUES (p_receipt, p_message_id, p_platform, p_environment, p_app_id, p_token_hash, 'refused', 'void',
                now() + make_interval(secs => p_ttl_seconds), refusal)
        ON CONFLICT (receipt) DO UPDATE SET state = 'refused', secret_status = 'void', key_id = NULL, secret_hash = NULL,
                reason = refusal, updated_at = now();
        RETURN QUERY SELECT 'refused'::text, refusal, false;
        RETURN;
    END IF;
    INSERT INTO herald.push_verifications (receipt, message_id, platform, environment, app_id, token_hash, state, secret_status,
                                           key_id, secret_hash, expires_at, owner_key, sends)
    VALUES (p_receipt, p_message_id, p_platform, p_environment, p_app_id, p_token_hash, 'sending', 'pending',
            p_key_id, p_secret_hash, now() + make_interval(secs => p_ttl_seconds), p_owner_key, 1)
    ON CONFLICT (receipt) DO UPDATE SET state = 'sending', secret_status = 'pending', key_id = p_key_id, secret_hash = p_secret_hash,
            expires_at = now() + make_interval(secs => p_ttl_seconds), owner_key = p_owner_key,
            sends = herald.push_verifications.sends + 1,
            uncertain_sends = herald.push_verifications.uncertain_sends + CASE WHEN uncertain THEN 1 ELSE 0 END,
            reason = NULL, updated_at = now();
    RETURN QUERY SELECT 'send'::text, NULL::text, uncertain;
END
$$;


ALTER FUNCTION herald.push_prepare(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_token_hint text, p_key_id text, p_secret_hash bytea, p_ttl_seconds integer, p_rate_max integer, p_rate_window_seconds integer, p_owner_key bigint) OWNER TO herald_migrate;

--
-- Name: push_receipt_consume(text, text, integer, text); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.push_receipt_consume(p_receipt text, p_app_id text, p_max_age_seconds integer, p_for text) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    r herald.push_verifications%ROWTYPE;
BEGIN
    SELECT * INTO r FROM herald.push_verifications WHERE receipt = p_receipt FOR UPDATE;
    IF NOT FOUND THEN RETURN 'unknown'; END IF;
    IF r.consumed_for = p_for THEN RETURN 'ok'; END IF;
    IF r.consumed_at IS NOT NULL THEN RETURN 'used'; END IF;
    IF r.app_id <> p_app_id THEN RETURN 'other_app'; END IF;
    IF r.secret_status <> 'verified' OR r.verified_at IS NULL THEN RETURN 'unconfirmed'; END IF;
    IF r.verified_at < now() - make_interval(secs => p_max_age_seconds) THEN RETURN 'expired'; END IF;
    UPDATE herald.push_verifications SET consumed_at = now(), consumed_for = p_for, updated_at = now()
     WHERE receipt = p_receipt;
    RETURN 'ok';
END;
$$;


ALTER FUNCTION herald.push_receipt_consume(p_receipt text, p_app_id text, p_max_age_seconds integer, p_for text) OWNER TO herald;

--
-- Name: sms_batch_limits(integer[], integer[], text[], text[], integer[], integer[], timestamp with time zone, integer); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.sms_batch_limits(p_fast integer[], p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone, p_shard integer) RETURNS TABLE(req integer, scope text, key text, max integer, window_seconds integer, bucket integer, bucket_start timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
    SELECT l.req, l.scope,
           CASE WHEN l.scope = 'global' THEN 'shard-' || l.window_seconds || '-' || p_shard ELSE l.key END,
           l.max, l.window_seconds, greatest(l.window_seconds / 10, 1),
           to_timestamp(floor(extract(epoch FROM p_now) / greatest(l.window_seconds / 10, 1))
                        * greatest(l.window_seconds / 10, 1))
      FROM unnest(p_limit_requests, p_scopes, p_keys, p_windows, p_maxes) AS l(req, scope, key, window_seconds, max)
     WHERE l.req = ANY (p_fast) AND l.scope <> 'resend'
$$;


ALTER FUNCTION herald.sms_batch_limits(p_fast integer[], p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone, p_shard integer) OWNER TO herald;

--
-- Name: sms_exhausted(text, text, text, text, text); Type: FUNCTION; Schema: herald; Owner: herald_migrate
--

CREATE FUNCTION herald.sms_exhausted(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_reason text) RETURNS boolean
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    ver herald.sms_verifications%ROWTYPE;
BEGIN
    SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO herald.sms_verifications (verification_id, phone_number, purpose, message_id, state, reason)
        VALUES (p_verification_id, p_phone, p_purpose, p_message_id, 'failed', p_reason);
        RETURN true;
    END IF;
    IF ver.phone_number <> p_phone OR ver.purpose <> p_purpose OR ver.state NOT IN ('sending', 'retrying')
       OR (ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key)) THEN
        RETURN false;
    END IF;
    UPDATE herald.sms_verifications SET state = 'failed', reason = p_reason, updated_at = now()
     WHERE verification_id = p_verification_id;
    UPDATE herald.sms_codes SET status = 'failed', finished_at = now()
     WHERE id = ver.code_id AND status = 'pending' AND sends IS NOT DISTINCT FROM ver.code_sends;
    RETURN true;
END;
$$;


ALTER FUNCTION herald.sms_exhausted(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_reason text) OWNER TO herald_migrate;

--
-- Name: sms_guess_failed(bigint); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.sms_guess_failed(p_code_id bigint) RETURNS TABLE(o_attempts_left integer, o_locked_until timestamp with time zone)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    c herald.sms_codes%ROWTYPE;
    g herald.sms_guess_failures%ROWTYPE;
    v_window interval;
    v_lock timestamptz;
BEGIN
    UPDATE herald.sms_codes
       SET attempts = attempts + 1,
           status = CASE WHEN attempts + 1 >= max_attempts THEN 'dead' ELSE status END,
           finished_at = CASE WHEN attempts + 1 >= max_attempts THEN now() ELSE finished_at END
     WHERE id = p_code_id
    RETURNING * INTO c;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'sms code % not found', p_code_id;
    END IF;
    v_window := make_interval(secs => coalesce(c.guess_window_seconds, 86400));
    INSERT INTO herald.sms_guess_failures (phone_number, purpose, expires_at)
    VALUES (c.phone_number, c.purpose, now() + v_window)
    ON CONFLICT (phone_number, purpose) DO NOTHING;
    SELECT * INTO g FROM herald.sms_guess_failures
     WHERE phone_number = c.phone_number AND purpose = c.purpose FOR UPDATE;
    IF greatest(g.last_failure_at, g.locked_until) <= now() - v_window THEN
        g.failures := 0;
        g.lockouts := 0;
    END IF;
    g.failures := g.failures + 1;
    IF g.failures >= coalesce(c.guess_limit, 10) THEN
        v_lock := now() + make_interval(secs => least(
            coalesce(c.lockout_seconds, 3600)::double precision * power(2, least(g.lockouts, 40)),
            coalesce(c.lockout_max_seconds, 86400)));
        g.locked_until := v_lock;
        g.lockouts := g.lockouts + 1;
        g.failures := 0;
    END IF;
    UPDATE herald.sms_guess_failures
       SET failures = g.failures, lockouts = g.lockouts, last_failure_at = now(), locked_until = g.locked_until,
           expires_at = greatest(now(), g.locked_until) + v_window
     WHERE phone_number = c.phone_number AND purpose = c.purpose;
    RETURN QUERY SELECT greatest(c.max_attempts - c.attempts, 0), v_lock;
END;
$$;


ALTER FUNCTION herald.sms_guess_failed(p_code_id bigint) OWNER TO herald;

--
-- Name: sms_prepare(text, text, text, text, boolean, boolean, text, bytea, integer, integer, integer, text[], text[], integer[], integer[], bigint, integer, integer, integer, integer); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.sms_prepare(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_force boolean, p_test boolean, p_key_id text, p_code_hash bytea, p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer) RETURNS TABLE(o_decision text, o_reason text, o_uncertain boolean)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    ver herald.sms_verifications%ROWTYPE;
    cur herald.sms_codes%ROWTYPE;
    have_code boolean;
    code_row bigint;
    refused text;
    n_sent bigint;
    n_sending bigint;
    new_sends integer;
BEGIN
    SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    IF FOUND THEN
        IF ver.phone_number <> p_phone THEN
            RETURN QUERY SELECT 'invalid'::text, 'verification_id reused with a different phone_number'::text, false;
            RETURN;
        ELSIF ver.purpose <> p_purpose THEN
            RETURN QUERY SELECT 'invalid'::text, 'verification_id reused with a different purpose'::text, false;
            RETURN;
        END IF;
        IF ver.state NOT IN ('sending', 'retrying') THEN
            RETURN QUERY SELECT 'done'::text, ver.state, false;
            RETURN;
        END IF;
        IF ver.state = 'sending' AND ver.owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(ver.owner_key) THEN
            RETURN QUERY SELECT 'busy'::text, NULL::text, false;
            RETURN;
        END IF;
        SELECT * INTO cur FROM herald.sms_codes WHERE id = ver.code_id FOR UPDATE;
        IF NOT FOUND OR cur.status <> 'pending' THEN
            UPDATE herald.sms_verifications SET state = 'failed', reason = 'code_closed', updated_at = now()
             WHERE verification_id = p_verification_id;
            RETURN QUERY SELECT 'closed'::text, 'code_closed'::text, false;
            RETURN;
        END IF;
        IF cur.sends IS DISTINCT FROM ver.code_sends THEN
            UPDATE herald.sms_verifications SET state = 'reused', updated_at = now()
             WHERE verification_id = p_verification_id;
            RETURN QUERY SELECT 'reused'::text, NULL::text, false;
            RETURN;
        END IF;
        UPDATE herald.sms_codes
           SET key_id = p_key_id, code_hash = p_code_hash, attempts = 0,
               expires_at = now() + make_interval(secs => p_ttl_seconds), last_sent_at = now(), sends = sends + 1
         WHERE id = cur.id;
        UPDATE herald.sms_verifications
           SET state = 'sending', message_id = p_message_id, code_sends = cur.sends + 1, owner_key = p_owner_key, updated_at = now(),
               uncertain_sends = uncertain_sends + CASE WHEN ver.state = 'sending' THEN 1 ELSE 0 END
         WHERE verification_id = p_verification_id;
        RETURN QUERY SELECT 'send'::text, NULL::text, ver.state = 'sending';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM herald.sms_guess_failures
                WHERE phone_number = p_phone AND purpose = p_purpose AND locked_until > now()) THEN
        INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, reason)
        VALUES (p_verification_id, NULL, p_phone, p_purpose, p_message_id, 'refused', 'locked_out');
        RETURN QUERY SELECT 'refused'::text, 'locked_out'::text, false;
        RETURN;
    END IF;
    SELECT * INTO cur FROM herald.sms_codes
     WHERE phone_number = p_phone AND purpose = p_purpose AND status = 'pending' FOR UPDATE;
    have_code := FOUND;
    IF have_code AND cur.expires_at <= now() THEN
        UPDATE herald.sms_codes SET status = 'expired', finished_at = now() WHERE id = cur.id;
        have_code := false;
    END IF;
    IF NOT p_test AND have_code AND NOT p_force AND NOT cur.test_number
       AND cur.last_sent_at > now() - make_interval(secs => p_resend_interval_seconds) THEN
        SELECT count(*) FILTER (WHERE state = 'sent'),
               count(*) FILTER (WHERE state = 'sending' AND owner_key IS NOT NULL AND NOT pg_try_advisory_xact_lock_shared(owner_key))
          INTO n_sent, n_sending
          FROM herald.sms_verifications WHERE code_id = cur.id AND code_sends = cur.sends;
        IF n_sent > 0 THEN
            INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends)
            VALUES (p_verification_id, cur.id, p_phone, p_purpose, p_message_id, 'reused', cur.sends);
            RETURN QUERY SELECT 'reused'::text, NULL::text, false;
            RETURN;
        ELSIF n_sending > 0 THEN
            RETURN QUERY SELECT 'busy'::text, NULL::text, false;
            RETURN;
        END IF;
    END IF;
    IF NOT p_test THEN
        IF 'resend' = ANY (p_scopes) AND NOT (have_code AND p_force) THEN
            SELECT coalesce(array_agg(u.s ORDER BY u.i), '{}'), coalesce(array_agg(u.k ORDER BY u.i), '{}'),
                   coalesce(array_agg(u.w ORDER BY u.i), '{}'), coalesce(array_agg(u.m ORDER BY u.i), '{}')
              INTO p_scopes, p_keys, p_windows, p_maxes
              FROM unnest(p_scopes, p_keys, p_windows, p_maxes) WITH ORDINALITY AS u(s, k, w, m, i)
             WHERE u.s <> 'resend';
        END IF;
        refused := herald.sms_rate_take(p_scopes, p_keys, p_windows, p_maxes, now());
        IF refused IS NOT NULL THEN
            INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, reason)
            VALUES (p_verification_id, NULL, p_phone, p_purpose, p_message_id, 'refused', 'rate_limited:' || refused);
            RETURN QUERY SELECT 'refused'::text, 'rate_limited:' || refused, false;
            RETURN;
        END IF;
    END IF;
    IF have_code THEN
        UPDATE herald.sms_codes
           SET key_id = p_key_id, code_hash = p_code_hash, max_attempts = p_max_attempts,
               attempts = CASE WHEN p_test AND cur.test_number THEN cur.attempts ELSE 0 END,
               test_number = p_test, expires_at = now() + make_interval(secs => p_ttl_seconds),
               last_sent_at = now(), sends = sends + 1, guess_limit = p_guess_limit,
               guess_window_seconds = p_guess_window_seconds, lockout_seconds = p_lockout_seconds,
               lockout_max_seconds = p_lockout_max_seconds
         WHERE id = cur.id;
        code_row := cur.id;
        new_sends := cur.sends + 1;
    ELSE
        new_sends := 1;
        INSERT INTO herald.sms_codes (phone_number, purpose, status, key_id, code_hash, max_attempts, test_number, expires_at, last_sent_at, sends,
                                      guess_limit, guess_window_seconds, lockout_seconds, lockout_max_seconds)
        VALUES (p_phone, p_purpose, 'pending', p_key_id, p_code_hash, p_max_attempts, p_test,
                now() + make_interval(secs => p_ttl_seconds), now(), 1,
                p_guess_limit, p_guess_window_seconds, p_lockout_seconds, p_lockout_max_seconds)
        ON CONFLICT (phone_number, purpose) WHERE status = 'pending' DO NOTHING
        RETURNING id INTO code_row;
        IF code_row IS NULL THEN
            RAISE EXCEPTION 'a concurrent request created the pending code; try again' USING ERRCODE = '40001';
        END IF;
    END IF;
    INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends, owner_key)
    VALUES (p_verification_id, code_row, p_phone, p_purpose, p_message_id, CASE WHEN p_test THEN 'test' ELSE 'sending' END, new_sends, p_owner_key);
    RETURN QUERY SELECT CASE WHEN p_test THEN 'test' ELSE 'send' END, NULL::text, false;
END;
$$;


ALTER FUNCTION herald.sms_prepare(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_force boolean, p_test boolean, p_key_id text, p_code_hash bytea, p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer) OWNER TO herald;

--
-- Name: sms_prepare_batch(text[], text[], text[], text[], boolean[], boolean[], text[], bytea[], integer, integer, integer, integer[], text[], text[], integer[], integer[], bigint, integer, integer, integer, integer); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.sms_prepare_batch(p_ids text[], p_message_ids text[], p_phones text[], p_purposes text[], p_forces boolean[], p_tests boolean[], p_key_ids text[], p_hashes bytea[], p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer) RETURNS TABLE(o_i integer, o_decision text, o_reason text, o_uncertain boolean)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    v_now timestamptz := now();
    v_shard integer := mod(txid_current(), 16)::int;
    fast integer[];
    slow integer[] := '{}';
    c_scopes text[];
    c_keys text[];
    c_starts timestamptz[];
    c_totals integer[];
    c_taken integer[];
    c_windows integer[];
    c_buckets integer[];
    full_counter boolean;
    made integer;
    d record;
BEGIN
    SELECT coalesce(array_agg(r.i ORDER BY r.i), '{}') INTO fast
      FROM unnest(p_ids, p_phones, p_purposes, p_tests) WITH ORDINALITY AS r(id, phone, purpose, test, i)
     WHERE NOT r.test
       AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v WHERE v.verification_id = r.id)
       AND NOT EXISTS (SELECT 1 FROM herald.sms_codes c WHERE c.phone_number = r.phone AND c.purpose = r.purpose AND c.status = 'pending')
       AND NOT EXISTS (SELECT 1 FROM herald.sms_guess_failures g
                        WHERE g.phone_number = r.phone AND g.purpose = r.purpose AND g.locked_until > v_now)
       AND (SELECT count(*) FROM unnest(p_ids, p_phones, p_purposes) AS o(id, phone, purpose)
             WHERE o.id = r.id OR (o.phone = r.phone AND o.purpose = r.purpose)) = 1;
    IF cardinality(fast) < cardinality(p_ids) THEN
        SELECT coalesce(array_agg(r.i ORDER BY r.i), '{}') INTO slow
          FROM unnest(p_ids, p_tests) WITH ORDINALITY AS r(id, test, i)
         WHERE NOT r.test AND r.i <> ALL (fast)
           AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v WHERE v.verification_id = r.id);
    END IF;
    IF cardinality(slow) > 0 THEN
        WITH wanted AS (
            SELECT l.scope,
                   CASE WHEN l.scope = 'global' THEN 'shard-' || l.window_seconds || '-' || v_shard ELSE l.key END AS key,
                   l.window_seconds, greatest(l.window_seconds / 10, 1) AS bucket
              FROM unnest(p_limit_requests, p_scopes, p_keys, p_windows) AS l(req, scope, key, window_seconds)
             WHERE (l.req = ANY (slow) OR l.req = ANY (fast)) AND (l.scope <> 'resend' OR p_forces[l.req])
        ), located AS (
            SELECT w.scope, w.key, to_timestamp(floor(extract(epoch FROM v_now) / w.bucket) * w.bucket) AS bucket_start,
                   max(w.bucket + w.window_seconds) AS lasts
              FROM wanted w GROUP BY 1, 2, 3
        )
        INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
        SELECT l.scope, l.key, l.bucket_start, 0, l.bucket_start + make_interval(secs => l.lasts)
          FROM located l ORDER BY l.scope, l.key, l.bucket_start
        ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count WHERE false;
    END IF;
    IF cardinality(fast) > 0 THEN
        WITH wanted AS (
            SELECT l.scope, l.key, l.bucket_start, max(l.window_seconds) AS window_seconds, max(l.bucket) AS bucket, count(*)::int AS n
              FROM herald.sms_batch_limits(fast, p_limit_requests, p_scopes, p_keys, p_windows, p_maxes, v_now, v_shard) l
             GROUP BY l.scope, l.key, l.bucket_start
        ), counted AS (
            INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
            SELECT w.scope, w.key, w.bucket_start, w.n, w.bucket_start + make_interval(secs => w.bucket + w.window_seconds)
              FROM wanted w ORDER BY w.scope, w.key, w.bucket_start
            ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count + EXCLUDED.count
            RETURNING r.scope, r.key, r.window_start, r.count
        )
        SELECT array_agg(w.scope), array_agg(w.key), array_agg(w.bucket_start), array_agg(c.count), array_agg(w.n),
               array_agg(w.window_seconds), array_agg(w.bucket)
          INTO c_scopes, c_keys, c_starts, c_totals, c_taken, c_windows, c_buckets
          FROM wanted w JOIN counted c ON c.scope = w.scope AND c.key = w.key AND c.window_start = w.bucket_start;
        WITH counter AS MATERIALIZED (
            SELECT u.*, (SELECT coalesce(sum(e.count), 0) FROM herald.sms_rate_counters e
                          WHERE e.scope = u.scope
                            AND e.key = ANY (CASE WHEN u.scope = 'global'
                                                  THEN ARRAY(SELECT 'shard-' || u.window_seconds || '-' || g
                                                               FROM generate_series(0, 15) g)
                                                  ELSE ARRAY[u.key] END)
                            AND e.window_start > v_now - make_interval(secs => u.window_seconds + u.bucket)
                            AND e.window_start <= v_now
                            AND NOT (e.key = u.key AND e.window_start = u.bucket_start)) AS earlier
              FROM unnest(c_scopes, c_keys, c_starts, c_totals, c_taken, c_windows, c_buckets)
                   AS u(scope, key, bucket_start, total, taken, window_seconds, bucket)
        ), placed AS (
            SELECT l.max, c.total - c.taken + rank() OVER (PARTITION BY l.scope, l.key, l.bucket_start ORDER BY l.req) + c.earlier AS count
              FROM herald.sms_batch_limits(fast, p_limit_requests, p_scopes, p_keys, p_windows, p_maxes, v_now, v_shard) l
              JOIN counter c ON c.scope = l.scope AND c.key = l.key AND c.bucket_start = l.bucket_start
        )
        SELECT coalesce(bool_or(p.count > p.max), false) INTO full_counter FROM placed p;
        IF full_counter THEN
            UPDATE herald.sms_rate_counters r SET count = r.count - u.taken
              FROM unnest(c_scopes, c_keys, c_starts, c_taken) AS u(scope, key, window_start, taken)
             WHERE r.scope = u.scope AND r.key = u.key AND r.window_start = u.window_start;
            fast := '{}';
        ELSE
            WITH code AS (
                INSERT INTO herald.sms_codes (phone_number, purpose, status, key_id, code_hash, max_attempts, test_number, expires_at,
                                              last_sent_at, sends, guess_limit, guess_window_seconds, lockout_seconds, lockout_max_seconds)
                SELECT p_phones[f.i], p_purposes[f.i], 'pending', p_key_ids[f.i], p_hashes[f.i], p_max_attempts, false,
                       v_now + make_interval(secs => p_ttl_seconds), v_now, 1,
                       p_guess_limit, p_guess_window_seconds, p_lockout_seconds, p_lockout_max_seconds
                  FROM unnest(fast) AS f(i) ORDER BY p_phones[f.i], p_purposes[f.i]
                ON CONFLICT (phone_number, purpose) WHERE status = 'pending' DO NOTHING
                RETURNING id, phone_number, purpose
            ), verification AS (
                INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends, owner_key)
                SELECT p_ids[f.i], code.id, code.phone_number, code.purpose, p_message_ids[f.i], 'sending', 1, p_owner_key
                  FROM unnest(fast) AS f(i)
                  JOIN code ON code.phone_number = p_phones[f.i] AND code.purpose = p_purposes[f.i]
                RETURNING 1
            )
            SELECT count(*) INTO made FROM verification;
            IF made < cardinality(fast) THEN
                RAISE EXCEPTION 'a concurrent request created a pending code; try again' USING ERRCODE = '40001';
            END IF;
            RETURN QUERY SELECT f.i, 'send'::text, NULL::text, false FROM unnest(fast) AS f(i);
        END IF;
    END IF;
    FOR i IN 1 .. coalesce(cardinality(p_ids), 0) LOOP
        CONTINUE WHEN i = ANY (fast);
        SELECT * INTO d FROM herald.sms_prepare(
            p_ids[i], p_message_ids[i], p_phones[i], p_purposes[i], p_forces[i], p_tests[i], p_key_ids[i], p_hashes[i],
            p_ttl_seconds, p_max_attempts, p_resend_interval_seconds,
            ARRAY(SELECT u.s FROM unnest(p_limit_requests, p_scopes) WITH ORDINALITY AS u(r, s, o) WHERE u.r = i ORDER BY u.o),
            ARRAY(SELECT u.k FROM unnest(p_limit_requests, p_keys) WITH ORDINALITY AS u(r, k, o) WHERE u.r = i ORDER BY u.o),
            ARRAY(SELECT u.w FROM unnest(p_limit_requests, p_windows) WITH ORDINALITY AS u(r, w, o) WHERE u.r = i ORDER BY u.o),
            ARRAY(SELECT u.m FROM unnest(p_limit_requests, p_maxes) WITH ORDINALITY AS u(r, m, o) WHERE u.r = i ORDER BY u.o),
            p_owner_key, p_guess_limit, p_guess_window_seconds, p_lockout_seconds, p_lockout_max_seconds);
        o_i := i;
        o_decision := d.o_decision;
        o_reason := d.o_reason;
        o_uncertain := d.o_uncertain;
        RETURN NEXT;
    END LOOP;
END;
$$;


ALTER FUNCTION herald.sms_prepare_batch(p_ids text[], p_message_ids text[], p_phones text[], p_purposes text[], p_forces boolean[], p_tests boolean[], p_key_ids text[], p_hashes bytea[], p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer) OWNER TO herald;

--
-- Name: sms_rate_take(text[], text[], integer[], integer[], timestamp with time zone); Type: FUNCTION; Schema: herald; Owner: herald
--

CREATE FUNCTION herald.sms_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    v_refused text;
    v_scopes text[];
    v_keys text[];
    v_starts timestamptz[];
    v_order bigint[];
    v_counts integer[];
    v_maxes integer[];
    v_windows integer[];
    v_buckets integer[];
BEGIN
    IF coalesce(array_length(p_scopes, 1), 0) = 0 THEN
        RETURN NULL;
    END IF;
    WITH wanted AS MATERIALIZED (
        SELECT u.i, u.scope, u.max, u.window_seconds, greatest(u.window_seconds / 10, 1) AS bucket,
               CASE WHEN u.scope = 'global' THEN 'shard-' || u.window_seconds || '-' || mod(txid_current(), 16)::int
                    ELSE u.key END AS key
          FROM unnest(p_scopes, p_keys, p_windows, p_maxes) WITH ORDINALITY AS u(scope, key, window_seconds, max, i)
    ), located AS MATERIALIZED (
        SELECT w.*, to_timestamp(floor(extract(epoch FROM p_now) / w.bucket) * w.bucket) AS bucket_start FROM wanted w
    ), counted AS (
        INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
        SELECT l.scope, l.key, l.bucket_start, 1, l.bucket_start + make_interval(secs => l.bucket + l.window_seconds)
          FROM located l ORDER BY l.scope, l.key
        ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count + 1
        RETURNING r.scope, r.key, r.window_start, r.count
    )
    SELECT array_agg(l.i), array_agg(l.scope), array_agg(l.key), array_agg(l.bucket_start), array_agg(c.count),
           array_agg(l.max), array_agg(l.window_seconds), array_agg(l.bucket)
      INTO v_order, v_scopes, v_keys, v_starts, v_counts, v_maxes, v_windows, v_buckets
      FROM located l
      JOIN counted c ON c.scope = l.scope AND c.key = l.key AND c.window_start = l.bucket_start;
    SELECT (array_agg(u.scope ORDER BY u.i) FILTER (WHERE u.count + coalesce(earlier.n, 0) > u.max))[1]
      INTO v_refused
      FROM unnest(v_order, v_scopes, v_keys, v_starts, v_counts, v_maxes, v_windows, v_buckets)
           AS u(i, scope, key, bucket_start, count, max, window_seconds, bucket)
      LEFT JOIN LATERAL (
          SELECT sum(e.count) AS n FROM herald.sms_rate_counters e
           WHERE e.scope = u.scope
             AND e.key = ANY (CASE WHEN u.scope = 'global'
                                   THEN ARRAY(SELECT 'shard-' || u.window_seconds || '-' || g FROM generate_series(0, 15) g)
                                   ELSE ARRAY[u.key] END)
             AND e.window_start > p_now - make_interval(secs => u.window_seconds + u.bucket)
             AND e.window_start <= p_now
             AND NOT (e.key = u.key AND e.window_start = u.bucket_start)
      ) earlier ON true;
    IF v_refused IS NOT NULL THEN
        UPDATE herald.sms_rate_counters r SET count = r.count - 1
          FROM unnest(v_scopes, v_keys, v_starts) AS u(scope, key, window_start)
         WHERE r.scope = u.scope AND r.key = u.key AND r.window_start = u.window_start;
    END IF;
    RETURN v_refused;
END;
$$;


ALTER FUNCTION herald.sms_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone) OWNER TO herald;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: account_providers; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.account_providers (
    account_id text NOT NULL,
    provider text NOT NULL,
    provider_uid text NOT NULL,
    linked_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE herald.account_providers OWNER TO herald_migrate;

--
-- Name: accounts; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.accounts (
    id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    is_anonymous boolean DEFAULT true NOT NULL,
    last_sign_in_at timestamp with time zone,
    disabled boolean DEFAULT false NOT NULL,
    upgraded_at timestamp with time zone,
    delete_after timestamp with time zone,
    CONSTRAINT accounts_delete_after_anonymous CHECK (((delete_after IS NULL) OR is_anonymous))
);


ALTER TABLE herald.accounts OWNER TO herald_migrate;

--
-- Name: apple_attempts; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.apple_attempts (
    id bigint NOT NULL,
    message_id text NOT NULL,
    provider text NOT NULL,
    result text NOT NULL,
    http_status integer,
    error_code text,
    provider_message_id text,
    duration_ms integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT apple_attempts_result_check CHECK ((result = ANY (ARRAY['accepted'::text, 'rejected'::text, 'transient'::text, 'timeout'::text])))
);


ALTER TABLE herald.apple_attempts OWNER TO herald;

--
-- Name: apple_attempts_id_seq; Type: SEQUENCE; Schema: herald; Owner: herald
--

CREATE SEQUENCE herald.apple_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE herald.apple_attempts_id_seq OWNER TO herald;

--
-- Name: apple_attempts_id_seq; Type: SEQUENCE OWNED BY; Schema: herald; Owner: herald
--

ALTER SEQUENCE herald.apple_attempts_id_seq OWNED BY herald.apple_attempts.id;


--
-- Name: apple_jobs; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.apple_jobs (
    message_id text NOT NULL,
    operation text NOT NULL,
    account_id text NOT NULL,
    client_id text NOT NULL,
    code_hash text,
    state text NOT NULL,
    step text,
    owner_key bigint,
    calls integer DEFAULT 0 NOT NULL,
    uncertain_calls integer DEFAULT 0 NOT NULL,
    http_status integer,
    error text,
    reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT apple_jobs_operation_check CHECK ((operation = ANY (ARRAY['token'::text, 'revoke'::text]))),
    CONSTRAINT apple_jobs_state_check CHECK ((state = ANY (ARRAY['calling'::text, 'retrying'::text, 'stored'::text, 'revoked'::text, 'nothing'::text, 'failed'::text, 'uncertain'::text]))),
    CONSTRAINT apple_jobs_step_check CHECK ((step = ANY (ARRAY['exchange'::text, 'revoke'::text])))
);


ALTER TABLE herald.apple_jobs OWNER TO herald;

--
-- Name: apple_notifications; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.apple_notifications (
    jti text NOT NULL,
    message_id text NOT NULL,
    client_id text NOT NULL,
    type text NOT NULL,
    account_id text,
    outcome text DEFAULT 'applied'::text NOT NULL,
    issued_at timestamp with time zone NOT NULL,
    event_time timestamp with time zone NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT apple_notifications_outcome_check CHECK ((outcome = ANY (ARRAY['applied'::text, 'unchanged'::text, 'no_account'::text, 'ignored'::text])))
);


ALTER TABLE herald.apple_notifications OWNER TO herald;

--
-- Name: apple_relay_addresses; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.apple_relay_addresses (
    address_hash bytea NOT NULL,
    key_id text NOT NULL,
    deliverable boolean NOT NULL,
    event_time timestamp with time zone NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE herald.apple_relay_addresses OWNER TO herald;

--
-- Name: apple_tokens; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.apple_tokens (
    account_id text NOT NULL,
    client_id text NOT NULL,
    key_id text NOT NULL,
    nonce bytea NOT NULL,
    ciphertext bytea NOT NULL,
    tag bytea NOT NULL,
    jobs_exchange text NOT NULL,
    message_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT apple_tokens_nonce_check CHECK ((octet_length(nonce) = 12)),
    CONSTRAINT apple_tokens_tag_check CHECK ((octet_length(tag) = 16))
);


ALTER TABLE herald.apple_tokens OWNER TO herald;

--
-- Name: cleanup_policy; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.cleanup_policy (
    singleton boolean DEFAULT true NOT NULL,
    enabled boolean DEFAULT false NOT NULL,
    enabled_at timestamp with time zone,
    retention interval DEFAULT '30 days'::interval NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    kept_enabled_at timestamp with time zone,
    kept_retention interval,
    kept_until timestamp with time zone,
    CONSTRAINT cleanup_policy_check CHECK (((NOT enabled) OR (enabled_at IS NOT NULL))),
    CONSTRAINT cleanup_policy_kept_schedule CHECK ((((kept_until IS NULL) = (kept_enabled_at IS NULL)) AND ((kept_until IS NULL) = (kept_retention IS NULL)))),
    CONSTRAINT cleanup_policy_retention_check CHECK ((retention > '00:00:00'::interval)),
    CONSTRAINT cleanup_policy_singleton_check CHECK (singleton)
);


ALTER TABLE herald.cleanup_policy OWNER TO herald_migrate;

--
-- Name: cleanup_runs; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.cleanup_runs (
    id text NOT NULL,
    status text NOT NULL,
    dry_run boolean DEFAULT false NOT NULL,
    max_accounts bigint NOT NULL,
    fan_out integer DEFAULT 1 NOT NULL,
    retention interval,
    enabled_at timestamp with time zone,
    requested_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    ended_at timestamp with time zone,
    heartbeat_at timestamp with time zone DEFAULT now() NOT NULL,
    eligible_at_start bigint,
    accounts_deleted bigint DEFAULT 0 NOT NULL,
    purged jsonb DEFAULT '{}'::jsonb NOT NULL,
    batches bigint DEFAULT 0 NOT NULL,
    joins integer DEFAULT 0 NOT NULL,
    reason text,
    paused_ms bigint DEFAULT 0 NOT NULL,
    CONSTRAINT cleanup_runs_max_accounts_check CHECK ((max_accounts > 0)),
    CONSTRAINT cleanup_runs_status_check CHECK ((status = ANY (ARRAY['scheduled'::text, 'running'::text, 'completed'::text, 'cancelled'::text, 'failed'::text])))
);


ALTER TABLE herald.cleanup_runs OWNER TO herald_migrate;

--
-- Name: dev_outbox; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.dev_outbox (
    id bigint NOT NULL,
    kind text NOT NULL,
    message_id text NOT NULL,
    job_type text NOT NULL,
    recipient text NOT NULL,
    body jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE herald.dev_outbox OWNER TO herald_migrate;

--
-- Name: dev_outbox_id_seq; Type: SEQUENCE; Schema: herald; Owner: herald_migrate
--

CREATE SEQUENCE herald.dev_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE herald.dev_outbox_id_seq OWNER TO herald_migrate;

--
-- Name: dev_outbox_id_seq; Type: SEQUENCE OWNED BY; Schema: herald; Owner: herald_migrate
--

ALTER SEQUENCE herald.dev_outbox_id_seq OWNED BY herald.dev_outbox.id;


--
-- Name: device_tokens; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.device_tokens (
    token_hash text NOT NULL,
    platform text NOT NULL,
    token_hint text NOT NULL,
    app_id text NOT NULL,
    environment text NOT NULL,
    status text DEFAULT 'valid'::text NOT NULL,
    reason text,
    detail text,
    invalid_since timestamp with time zone,
    pushes bigint DEFAULT 0 NOT NULL,
    failures bigint DEFAULT 0 NOT NULL,
    last_success_at timestamp with time zone,
    last_failure_at timestamp with time zone,
    window_start timestamp with time zone,
    window_count integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT device_tokens_status_check CHECK ((status = ANY (ARRAY['valid'::text, 'invalid'::text])))
);


ALTER TABLE herald.device_tokens OWNER TO herald_migrate;

--
-- Name: email_codes; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.email_codes (
    id bigint NOT NULL,
    request_id text NOT NULL,
    email text NOT NULL,
    mode text NOT NULL,
    key_id text NOT NULL,
    code_hash bytea NOT NULL,
    settings jsonb NOT NULL,
    status text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    CONSTRAINT email_codes_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'used'::text, 'expired'::text, 'superseded'::text, 'failed'::text])))
);


ALTER TABLE herald.email_codes OWNER TO herald_migrate;

--
-- Name: email_codes_id_seq; Type: SEQUENCE; Schema: herald; Owner: herald_migrate
--

CREATE SEQUENCE herald.email_codes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE herald.email_codes_id_seq OWNER TO herald_migrate;

--
-- Name: email_codes_id_seq; Type: SEQUENCE OWNED BY; Schema: herald; Owner: herald_migrate
--

ALTER SEQUENCE herald.email_codes_id_seq OWNED BY herald.email_codes.id;


--
-- Name: email_rate_counters; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.email_rate_counters (
    scope text NOT NULL,
    key text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    count integer NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


ALTER TABLE herald.email_rate_counters OWNER TO herald;

--
-- Name: email_requests; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.email_requests (
    request_id text NOT NULL,
    message_id text NOT NULL,
    email text NOT NULL,
    mode text NOT NULL,
    state text NOT NULL,
    owner_key bigint,
    reason text,
    provider text,
    provider_message_id text,
    uncertain_sends integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    paired_email text,
    recovery_job text,
    recovery_exchange text,
    CONSTRAINT email_requests_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'sending'::text, 'retrying'::text, 'sent'::text, 'no_account'::text, 'noted'::text, 'failed'::text])))
);


ALTER TABLE herald.email_requests OWNER TO herald_migrate;

--
-- Name: email_send_attempts; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.email_send_attempts (
    id bigint NOT NULL,
    request_id text NOT NULL,
    provider text NOT NULL,
    result text NOT NULL,
    http_status integer,
    error_code text,
    provider_message_id text,
    duration_ms integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT email_send_attempts_result_check CHECK ((result = ANY (ARRAY['accepted'::text, 'rejected'::text, 'transient'::text, 'timeout'::text])))
);


ALTER TABLE herald.email_send_attempts OWNER TO herald_migrate;

--
-- Name: email_send_attempts_id_seq; Type: SEQUENCE; Schema: herald; Owner: herald_migrate
--

CREATE SEQUENCE herald.email_send_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE herald.email_send_attempts_id_seq OWNER TO herald_migrate;

--
-- Name: email_send_attempts_id_seq; Type: SEQUENCE OWNED BY; Schema: herald; Owner: herald_migrate
--

ALTER SEQUENCE herald.email_send_attempts_id_seq OWNED BY herald.email_send_attempts.id;


--
-- Name: event_outbox; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.event_outbox (
    id bigint NOT NULL,
    exchange text NOT NULL,
    name text NOT NULL,
    message_id text NOT NULL,
    body text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE herald.event_outbox OWNER TO herald_migrate;

--
-- Name: event_outbox_id_seq; Type: SEQUENCE; Schema: herald; Owner: herald_migrate
--

CREATE SEQUENCE herald.event_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE herald.event_outbox_id_seq OWNER TO herald_migrate;

--
-- Name: event_outbox_id_seq; Type: SEQUENCE OWNED BY; Schema: herald; Owner: herald_migrate
--

ALTER SEQUENCE herald.event_outbox_id_seq OWNED BY herald.event_outbox.id;


--
-- Name: job_runs; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.job_runs (
    message_id text NOT NULL,
    job_type text NOT NULL,
    queue text NOT NULL,
    status text NOT NULL,
    attempts integer DEFAULT 1 NOT NULL,
    owner_key bigint,
    claim_token text,
    lease_until timestamp with time zone,
    reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT job_runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'retrying'::text, 'completed'::text, 'rejected'::text, 'dead'::text])))
);


ALTER TABLE herald.job_runs OWNER TO herald_migrate;

--
-- Name: push_send_attempts; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.push_send_attempts (
    id bigint NOT NULL,
    receipt text NOT NULL,
    provider text NOT NULL,
    result text NOT NULL,
    http_status integer,
    error_code text,
    provider_message_id text,
    duration_ms integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT push_send_attempts_result_check CHECK ((result = ANY (ARRAY['accepted'::text, 'rejected'::text, 'transient'::text, 'timeout'::text])))
);


ALTER TABLE herald.push_send_attempts OWNER TO herald_migrate;

--
-- Name: push_send_attempts_id_seq; Type: SEQUENCE; Schema: herald; Owner: herald_migrate
--

CREATE SEQUENCE herald.push_send_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE herald.push_send_attempts_id_seq OWNER TO herald_migrate;

--
-- Name: push_send_attempts_id_seq; Type: SEQUENCE OWNED BY; Schema: herald; Owner: herald_migrate
--

ALTER SEQUENCE herald.push_send_attempts_id_seq OWNED BY herald.push_send_attempts.id;


--
-- Name: push_verifications; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.push_verifications (
    receipt text NOT NULL,
    message_id text NOT NULL,
    platform text NOT NULL,
    environment text NOT NULL,
    app_id text NOT NULL,
    token_hash text NOT NULL,
    state text NOT NULL,
    secret_status text NOT NULL,
    key_id text,
    secret_hash bytea,
    expires_at timestamp with time zone NOT NULL,
    owner_key bigint,
    sends integer DEFAULT 0 NOT NULL,
    uncertain_sends integer DEFAULT 0 NOT NULL,
    provider text,
    provider_message_id text,
    http_status integer,
    reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    verified_at timestamp with time zone,
    consumed_at timestamp with time zone,
    consumed_for text,
    CONSTRAINT push_verifications_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT push_verifications_platform_check CHECK ((platform = ANY (ARRAY['apns'::text, 'fcm'::text]))),
    CONSTRAINT push_verifications_secret_status_check CHECK ((secret_status = ANY (ARRAY['pending'::text, 'verified'::text, 'expired'::text, 'void'::text]))),
    CONSTRAINT push_verifications_state_check CHECK ((state = ANY (ARRAY['sending'::text, 'retrying'::text, 'sent'::text, 'failed'::text, 'refused'::text])))
);


ALTER TABLE herald.push_verifications OWNER TO herald_migrate;

--
-- Name: sms_app_verifications; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.sms_app_verifications (
    verification_id text NOT NULL,
    phone_number text NOT NULL,
    method text NOT NULL,
    detail text NOT NULL,
    score double precision,
    hostname text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT sms_app_verifications_method_check CHECK ((method = ANY (ARRAY['receipt'::text, 'captcha'::text])))
);


ALTER TABLE herald.sms_app_verifications OWNER TO herald;

--
-- Name: sms_codes; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.sms_codes (
    id bigint NOT NULL,
    phone_number text NOT NULL,
    purpose text NOT NULL,
    status text NOT NULL,
    key_id text NOT NULL,
    code_hash bytea NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer NOT NULL,
    test_number boolean DEFAULT false NOT NULL,
    sends integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_sent_at timestamp with time zone,
    expires_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    guess_limit integer,
    guess_window_seconds integer,
    lockout_seconds integer,
    lockout_max_seconds integer,
    CONSTRAINT sms_codes_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'verified'::text, 'dead'::text, 'expired'::text, 'failed'::text])))
);


ALTER TABLE herald.sms_codes OWNER TO herald_migrate;

--
-- Name: sms_codes_id_seq; Type: SEQUENCE; Schema: herald; Owner: herald_migrate
--

CREATE SEQUENCE herald.sms_codes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE herald.sms_codes_id_seq OWNER TO herald_migrate;

--
-- Name: sms_codes_id_seq; Type: SEQUENCE OWNED BY; Schema: herald; Owner: herald_migrate
--

ALTER SEQUENCE herald.sms_codes_id_seq OWNED BY herald.sms_codes.id;


--
-- Name: sms_fraud_counts; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.sms_fraud_counts (
    scope text NOT NULL,
    key text NOT NULL,
    minute timestamp with time zone NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    verified integer DEFAULT 0 NOT NULL,
    CONSTRAINT sms_fraud_counts_scope_check CHECK ((scope = ANY (ARRAY['region'::text, 'prefix'::text])))
);


ALTER TABLE herald.sms_fraud_counts OWNER TO herald;

--
-- Name: sms_fraud_marks; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.sms_fraud_marks (
    verification_id text NOT NULL,
    phone_number text NOT NULL,
    region text NOT NULL,
    prefix text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE herald.sms_fraud_marks OWNER TO herald;

--
-- Name: sms_fraud_pauses; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.sms_fraud_pauses (
    scope text NOT NULL,
    key text NOT NULL,
    state text NOT NULL,
    paused_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone,
    sent integer NOT NULL,
    verified integer NOT NULL,
    pauses integer DEFAULT 1 NOT NULL,
    lifted_at timestamp with time zone,
    lifted_by text,
    grace_until timestamp with time zone,
    CONSTRAINT sms_fraud_pauses_scope_check CHECK ((scope = ANY (ARRAY['region'::text, 'prefix'::text]))),
    CONSTRAINT sms_fraud_pauses_state_check CHECK ((state = ANY (ARRAY['paused'::text, 'lifted'::text])))
);


ALTER TABLE herald.sms_fraud_pauses OWNER TO herald;

--
-- Name: sms_guess_failures; Type: TABLE; Schema: herald; Owner: herald
--

CREATE TABLE herald.sms_guess_failures (
    phone_number text NOT NULL,
    purpose text NOT NULL,
    failures integer DEFAULT 0 NOT NULL,
    lockouts integer DEFAULT 0 NOT NULL,
    last_failure_at timestamp with time zone DEFAULT now() NOT NULL,
    locked_until timestamp with time zone,
    expires_at timestamp with time zone NOT NULL
);


ALTER TABLE herald.sms_guess_failures OWNER TO herald;

--
-- Name: sms_rate_counters; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.sms_rate_counters (
    scope text NOT NULL,
    key text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    count integer NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


ALTER TABLE herald.sms_rate_counters OWNER TO herald_migrate;

--
-- Name: sms_send_attempts; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.sms_send_attempts (
    id bigint NOT NULL,
    verification_id text NOT NULL,
    provider text NOT NULL,
    result text NOT NULL,
    http_status integer,
    error_code text,
    provider_message_id text,
    duration_ms integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT sms_send_attempts_result_check CHECK ((result = ANY (ARRAY['accepted'::text, 'rejected'::text, 'transient'::text, 'timeout'::text])))
);


ALTER TABLE herald.sms_send_attempts OWNER TO herald_migrate;

--
-- Name: sms_send_attempts_id_seq; Type: SEQUENCE; Schema: herald; Owner: herald_migrate
--

CREATE SEQUENCE herald.sms_send_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE herald.sms_send_attempts_id_seq OWNER TO herald_migrate;

--
-- Name: sms_send_attempts_id_seq; Type: SEQUENCE OWNED BY; Schema: herald; Owner: herald_migrate
--

ALTER SEQUENCE herald.sms_send_attempts_id_seq OWNED BY herald.sms_send_attempts.id;


--
-- Name: sms_verifications; Type: TABLE; Schema: herald; Owner: herald_migrate
--

CREATE TABLE herald.sms_verifications (
    verification_id text NOT NULL,
    code_id bigint,
    phone_number text NOT NULL,
    purpose text NOT NULL,
    message_id text NOT NULL,
    state text NOT NULL,
    code_sends integer,
    owner_key bigint,
    reason text,
    provider text,
    provider_message_id text,
    segments integer,
    encoding text,
    uncertain_sends integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT sms_verifications_state_check CHECK ((state = ANY (ARRAY['sending'::text, 'retrying'::text, 'sent'::text, 'reused'::text, 'test'::text, 'refused'::text, 'failed'::text])))
);


ALTER TABLE herald.sms_verifications OWNER TO herald_migrate;

--
-- Name: herald_schema_migrations; Type: TABLE; Schema: public; Owner: herald_migrate
--

CREATE TABLE public.herald_schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE public.herald_schema_migrations OWNER TO herald_migrate;

--
-- Name: apple_attempts id; Type: DEFAULT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.apple_attempts ALTER COLUMN id SET DEFAULT nextval('herald.apple_attempts_id_seq'::regclass);


--
-- Name: dev_outbox id; Type: DEFAULT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.dev_outbox ALTER COLUMN id SET DEFAULT nextval('herald.dev_outbox_id_seq'::regclass);


--
-- Name: email_codes id; Type: DEFAULT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.email_codes ALTER COLUMN id SET DEFAULT nextval('herald.email_codes_id_seq'::regclass);


--
-- Name: email_send_attempts id; Type: DEFAULT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.email_send_attempts ALTER COLUMN id SET DEFAULT nextval('herald.email_send_attempts_id_seq'::regclass);


--
-- Name: event_outbox id; Type: DEFAULT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.event_outbox ALTER COLUMN id SET DEFAULT nextval('herald.event_outbox_id_seq'::regclass);


--
-- Name: push_send_attempts id; Type: DEFAULT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.push_send_attempts ALTER COLUMN id SET DEFAULT nextval('herald.push_send_attempts_id_seq'::regclass);


--
-- Name: sms_codes id; Type: DEFAULT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.sms_codes ALTER COLUMN id SET DEFAULT nextval('herald.sms_codes_id_seq'::regclass);


--
-- Name: sms_send_attempts id; Type: DEFAULT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.sms_send_attempts ALTER COLUMN id SET DEFAULT nextval('herald.sms_send_attempts_id_seq'::regclass);


--
-- Data for Name: account_providers; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.account_providers (account_id, provider, provider_uid, linked_at) FROM stdin;
Fh3kL9mQ2sV7xB1nC5rT8wY0zA4d	password	ada@example.com	2026-11-03 19:22:40+00
Fh3kL9mQ2sV7xB1nC5rT8wY0zA4d	phone	+447700900123	2026-11-26 21:04:48+00
Ap5pL3eI9dQ1uX7cR2tW6yZ0nM8k	apple.com	001873.4f1c2e9a8b7d4c3e9f0a1b2c3d4e5f60.1142	2026-10-18 14:12:02+00
\.


--
-- Data for Name: accounts; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.accounts (id, created_at, is_anonymous, last_sign_in_at, disabled, upgraded_at, delete_after) FROM stdin;
q7Yc2LmN4pRt8VwXz1AbCdEf3Gh5	2026-11-20 18:42:07+00	t	2026-11-24 07:15:31+00	f	\N	\N
Kd9sPq2Lr6Tn0Vx4Zb8Yc1Wm3Hj7	2026-09-14 11:03:55+00	t	2026-09-14 11:03:55+00	f	\N	2026-12-01 09:00:00+00
Fh3kL9mQ2sV7xB1nC5rT8wY0zA4d	2026-11-02 08:30:12+00	f	2026-11-26 21:04:48+00	f	2026-11-27 06:36:02.886172+00	\N
Ap5pL3eI9dQ1uX7cR2tW6yZ0nM8k	2026-10-18 14:11:40+00	f	2026-11-25 12:00:03+00	f	2026-11-27 06:36:02.886172+00	\N
\.


--
-- Data for Name: apple_attempts; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.apple_attempts (id, message_id, provider, result, http_status, error_code, provider_message_id, duration_ms, created_at) FROM stdin;
1	85ebf038-b159-4f73-9b71-36b7de599ab2	apple	accepted	200	\N	\N	412	2026-11-27 06:36:02.893053+00
2	f342a3dc-5eba-4584-b43b-4d1327f0aeec	apple	transient	503	http_503	\N	1873	2026-11-27 06:36:02.895107+00
\.


--
-- Data for Name: apple_jobs; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.apple_jobs (message_id, operation, account_id, client_id, code_hash, state, step, owner_key, calls, uncertain_calls, http_status, error, reason, created_at, updated_at) FROM stdin;
85ebf038-b159-4f73-9b71-36b7de599ab2	token	Ap5pL3eI9dQ1uX7cR2tW6yZ0nM8k	com.example.herald.signin	a22d1068538ee3f9733f44ad467709842c44f5d76c18f105e6b03bb090551a33	stored	exchange	\N	1	0	200	\N	\N	2026-11-27 06:36:02.891974+00	2026-11-27 06:36:02.893366+00
f342a3dc-5eba-4584-b43b-4d1327f0aeec	revoke	Zz0dE1lE2tE3dA4pP5lE6uS7eR8x	com.example.herald.signin	\N	retrying	revoke	\N	1	0	503	http_503	Apple answered 503	2026-11-27 06:36:02.894844+00	2026-11-27 06:36:02.895221+00
4d42f694-7b19-46ee-a6ab-b909f5e15621	revoke	q7Yc2LmN4pRt8VwXz1AbCdEf3Gh5	com.example.herald.signin	\N	nothing	\N	\N	0	0	\N	\N	nothing_to_revoke: no refresh token is stored and the job gave no authorization_code	2026-11-27 06:36:02.895357+00	2026-11-27 06:36:02.895357+00
\.


--
-- Data for Name: apple_notifications; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.apple_notifications (jti, message_id, client_id, type, account_id, outcome, issued_at, event_time, received_at) FROM stdin;
be21f146-38c9-4561-8776-340f8c0d903e	8dfade90-0180-4959-ae20-22efb83c19ec	com.example.herald.signin	email-disabled	Ap5pL3eI9dQ1uX7cR2tW6yZ0nM8k	applied	2026-11-21 10:15:02+00	2026-11-21 10:14:58+00	2026-11-21 10:15:03+00
8e1630d3-5f95-4886-a348-3ee7e4c8a650	a0218149-15b3-49af-a43b-9b502ba24992	com.example.herald.signin	consent-revoked	\N	no_account	2026-11-23 02:40:11+00	2026-11-23 02:40:09+00	2026-11-23 02:40:12+00
\.


--
-- Data for Name: apple_relay_addresses; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.apple_relay_addresses (address_hash, key_id, deliverable, event_time, updated_at) FROM stdin;
\\xf057a053363c1a3f3f8649a4704895e15b959fefe0c4af514088208da0d34aea	k2026-11	f	2026-11-21 10:14:58+00	2026-11-21 10:15:03+00
\\x8ec84e2a9c9c053fe7c6962a41fc641c3c02018472f6063746ab367de8ff01b1	k2026-10	t	2026-10-30 17:02:44+00	2026-10-30 17:02:45+00
\.


--
-- Data for Name: apple_tokens; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.apple_tokens (account_id, client_id, key_id, nonce, ciphertext, tag, jobs_exchange, message_id, created_at, updated_at) FROM stdin;
Ap5pL3eI9dQ1uX7cR2tW6yZ0nM8k	com.example.herald.signin	tk2026-10	\\xaa0cd311e9453e1fb9b9e14f	\\xd753fb112b1f51134cd448d5c61dc420ba9d3abad6c556629421aa37898c7b5d206cf0b7f88dc38ec481648a6abf09df3ea426d916eef1a080ea88e8d7f3d949017dedb363853a2f	\\x7ba27d16fc1305584549bf7aee4c81d8	herald	85ebf038-b159-4f73-9b71-36b7de599ab2	2026-11-27 06:36:02.893527+00	2026-11-27 06:36:02.893527+00
Zz0dE1lE2tE3dA4pP5lE6uS7eR8x	com.example.herald.signin	tk2026-10	\\xb79397ae9847146259d1600a	\\x5e17e3cd127c58df657aa719c8ee22d380f1ff752c75cd3eb3bb63fc715253f300932050f413f69b3ec70d5837a1c46b54ca2211a590f8c4a675e6a7f2b45a3b2827e1c908a7a8b1	\\x9cdffc199fb61f179db53214ba18d6f8	herald	1bd626d2-8bf1-4b57-aed2-2ef1c871b7e7	2026-11-27 06:36:02.893527+00	2026-11-27 06:36:02.893527+00
\.


--
-- Data for Name: cleanup_policy; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.cleanup_policy (singleton, enabled, enabled_at, retention, updated_at, kept_enabled_at, kept_retention, kept_until) FROM stdin;
t	t	2026-10-01 09:00:00+00	30 days	2026-10-01 09:00:00+00	\N	\N	\N
\.


--
-- Data for Name: cleanup_runs; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.cleanup_runs (id, status, dry_run, max_accounts, fan_out, retention, enabled_at, requested_at, started_at, ended_at, heartbeat_at, eligible_at_start, accounts_deleted, purged, batches, joins, reason, paused_ms) FROM stdin;
cleanup-2026-11-20	completed	t	1000000	1	30 days	2026-10-01 09:00:00+00	2026-11-20 03:00:00+00	2026-11-20 03:00:01+00	2026-11-20 03:00:04+00	2026-11-20 03:00:04+00	2	0	{"job_runs": 41, "sms_codes": 12, "dev_outbox": 0, "email_codes": 3, "sms_verifications": 17}	0	1	dry run: nothing deleted	0
cleanup-2026-11-26	completed	f	1000000	2	30 days	2026-10-01 09:00:00+00	2026-11-26 03:00:00+00	2026-11-26 03:00:01+00	2026-11-26 03:02:37+00	2026-11-26 03:02:37+00	2	2	{"job_runs": 58, "sms_codes": 14, "email_codes": 3, "sms_rate_counters": 96, "sms_verifications": 19}	9	2	\N	1250
\.


--
-- Data for Name: dev_outbox; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.dev_outbox (id, kind, message_id, job_type, recipient, body, created_at) FROM stdin;
1	sms	45425fc7-5d11-4cb0-ace1-64320c073afd	sms.verification.v1	+12*******47	{"text": "Your Herald code is ******. Don't share it.\\n\\n@app.example.com #******", "encoding": "GSM-7", "segments": 1}	2026-11-27 06:36:02.906748+00
2	email	3999f1f7-637c-450a-905a-8c5491861297	email.action.v1	a***@example.com	{"kind": "sign_in", "text": "Follow this link to sign in:\\nhttps://links.example.com/__/auth/action?mode=signIn&oobCode=********&continueUrl=https%3A%2F%2Fapp.example.com%2Ffinish-sign-in&lang=en\\n", "subject": "Sign in to Herald"}	2026-11-27 06:36:02.913279+00
\.


--
-- Data for Name: device_tokens; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.device_tokens (token_hash, platform, token_hint, app_id, environment, status, reason, detail, invalid_since, pushes, failures, last_success_at, last_failure_at, window_start, window_count, created_at, updated_at) FROM stdin;
6e0a683555bcd73bc99847d00b234a5157b0e0b3254150a8d4209e419b679a75	apns	9f3c2a…e81b	com.example.herald	production	valid	\N	\N	\N	1	0	2026-11-27 06:36:02.897936+00	\N	2026-11-27 06:36:02.896115+00	1	2026-11-27 06:36:02.896115+00	2026-11-27 06:36:02.897936+00
74d5ae6e863346844edeee1d1179a241d367a8ede582601620e5c8b67cc241d2	fcm	dK3mQz…Yw0P	com.example.herald.android	production	invalid	unregistered	UNREGISTERED	2026-11-27 06:36:02.898512+00	0	1	\N	2026-11-27 06:36:02.898512+00	2026-11-27 06:36:02.898133+00	1	2026-11-27 06:36:02.898133+00	2026-11-27 06:36:02.898599+00
\.


--
-- Data for Name: email_codes; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.email_codes (id, request_id, email, mode, key_id, code_hash, settings, status, created_at, expires_at, used_at) FROM stdin;
1	req-3999f1f7-637c	ada@example.com	sign_in	k2026-11	\\x258fcb5c40b75b55f5fdb06a2c1753f3ff613bf6d791cc29b70c3bcb5a35a99a	{"url": "https://app.example.com/finish-sign-in", "link_domain": "links.example.com", "ios_bundle_id": "com.example.herald", "handle_code_in_app": true}	used	2026-11-27 06:36:02.910865+00	2026-11-27 07:36:02.910865+00	2026-11-27 06:36:02.913459+00
2	req-bffb3a18-6a38	grace.new@example.org	verify_and_change_email	k2026-11	\\x4d342e92c41bde24acf15a2b42afa24d9feabe034cf3d522fef025fae3808381	{"url": "https://app.example.com/account", "link_domain": "links.example.com", "handle_code_in_app": false}	used	2026-11-27 06:36:02.913826+00	2026-11-27 07:36:02.913826+00	2026-11-27 06:36:02.914449+00
3	req-d97453ed-527f	ada@example.com	reset_password	k2026-11	\\x5316dc628c2fd7e6322de83befb76b5a84ed132810f689edc3bdbc34054624a9	{"url": "https://app.example.com/reset", "link_domain": "links.example.com", "handle_code_in_app": false}	pending	2026-11-27 06:36:02.915032+00	2026-11-27 07:36:02.915032+00	\N
\.


--
-- Data for Name: email_rate_counters; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.email_rate_counters (scope, key, window_start, count, expires_at) FROM stdin;
email_address	grace.new@example.org	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
global	shard-3600-12	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
ip	2001:db8:9c::/64	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
email_address	nobody@example.net	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
global	shard-3600-14	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
email_address	ada@example.com	2026-11-27 06:36:00+00	2	2026-11-27 07:42:00+00
global	shard-3600-1	2026-11-27 06:36:00+00	2	2026-11-27 07:42:00+00
ip	198.51.100.23	2026-11-27 06:36:00+00	3	2026-11-27 07:42:00+00
\.


--
-- Data for Name: email_requests; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.email_requests (request_id, message_id, email, mode, state, owner_key, reason, provider, provider_message_id, uncertain_sends, created_at, updated_at, paired_email, recovery_job, recovery_exchange) FROM stdin;
req-3999f1f7-637c	3999f1f7-637c-450a-905a-8c5491861297	ada@example.com	sign_in	sent	5247757419333893032	\N	outbox	outbox-3999f1f7-637c-450a-905a-8c5491861297	0	2026-11-27 06:36:02.910865+00	2026-11-27 06:36:02.913355+00	\N	\N	\N
req-bffb3a18-6a38	bffb3a18-6a38-443d-be39-0f12f65619fd	grace.new@example.org	verify_and_change_email	sent	6213881634976855047	\N	http_mail	<20261127.4f2a9c@mail.example.com>	0	2026-11-27 06:36:02.913826+00	2026-11-27 06:36:02.914357+00	grace@example.com	{"action_code_settings":{"handle_code_in_app":false,"link_domain":"links.example.com","url":"https://app.example.com/account"},"email":"grace@example.com","locale":"en","mode":"recover_email","request_id":"recover-70ad1d8934e02503e3be9f5b400b2256e0916b85","version":1}	herald
recover-70ad1d8934e02503e3be9f5b400b2256e0916b85	recover-70ad1d8934e02503e3be9f5b400b2256e0916b85	grace@example.com	recover_email	queued	\N	\N	\N	\N	0	2026-11-27 06:36:02.914449+00	2026-11-27 06:36:02.914449+00	grace.new@example.org	\N	\N
req-1a07f540-f5be	1a07f540-f5be-4248-ab26-ec0d371b1b2b	nobody@example.net	reset_password	no_account	\N	\N	\N	\N	0	2026-11-27 06:36:02.914745+00	2026-11-27 06:36:02.914745+00	\N	\N	\N
req-d97453ed-527f	d97453ed-527f-406e-a7db-2d6554ca59ce	ada@example.com	reset_password	sending	5247757419333893032	\N	\N	\N	0	2026-11-27 06:36:02.915032+00	2026-11-27 06:36:02.915032+00	\N	\N	\N
\.


--
-- Data for Name: email_send_attempts; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.email_send_attempts (id, request_id, provider, result, http_status, error_code, provider_message_id, duration_ms, created_at) FROM stdin;
1	req-3999f1f7-637c	outbox	accepted	\N	\N	outbox-3999f1f7-637c-450a-905a-8c5491861297	3	2026-11-27 06:36:02.913025+00
2	req-bffb3a18-6a38	smtp	transient	\N	421	\N	1290	2026-11-27 06:36:02.914261+00
3	req-bffb3a18-6a38	http_mail	accepted	202	\N	<20261127.4f2a9c@mail.example.com>	318	2026-11-27 06:36:02.914261+00
\.


--
-- Data for Name: event_outbox; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.event_outbox (id, exchange, name, message_id, body, created_at) FROM stdin;
1	herald.events	account.deleted	ad8426d4-6f08-4940-914a-92262f7cdc4c	{"account_id":"Zz0dE1lE2tE3dA4pP5lE6uS7eR8x","created_at":"2026-10-05T16:20:00.000Z","deleted_at":"2026-11-27T06:36:02.893Z","event":"account.deleted","occurred_at":"2026-11-27T06:36:02.893Z","reason":"deleted","version":1}	2026-11-27 06:36:02.893859+00
2	herald	apple.revoke	f342a3dc-5eba-4584-b43b-4d1327f0aeec	{"version" : 1, "account_id" : "Zz0dE1lE2tE3dA4pP5lE6uS7eR8x", "client_id" : "com.example.herald.signin"}	2026-11-27 06:36:02.893859+00
3	herald	email.action	recover-70ad1d8934e02503e3be9f5b400b2256e0916b85	{"action_code_settings":{"handle_code_in_app":false,"link_domain":"links.example.com","url":"https://app.example.com/account"},"email":"grace@example.com","locale":"en","mode":"recover_email","request_id":"recover-70ad1d8934e02503e3be9f5b400b2256e0916b85","version":1}	2026-11-27 06:36:02.914449+00
4	herald.events	account.deleted	4e9435b6-25d9-42ea-bb02-0802a0606f1c	{"account_id":"aN0nYm0uS1eXp1rEdAcC0uNt0001","created_at":"2026-09-01T12:00:00.000Z","deleted_at":"2026-11-26T03:01:12.408Z","event":"account.deleted","occurred_at":"2026-11-26T03:01:12.408Z","reason":"anonymous_expired","run_id":"cleanup-2026-11-26","version":1}	2026-11-27 06:36:02.915771+00
5	herald.events	account.deleted	6a420ec7-c0ea-49a3-b0dd-b4312e2281d3	{"account_id":"aN0nYm0uS1eXp1rEdAcC0uNt0002","created_at":"2026-09-03T08:45:10.000Z","deleted_at":"2026-11-26T03:01:12.408Z","event":"account.deleted","occurred_at":"2026-11-26T03:01:12.408Z","reason":"anonymous_expired","run_id":"cleanup-2026-11-26","version":1}	2026-11-27 06:36:02.915771+00
6	herald.events	sms.sent	40ee05f1-8367-428a-a350-2141d8c08a71	{"encoding":"GSM-7","event":"sms.sent","occurred_at":"2026-11-27T06:30:00.000Z","phone":"+44*********23","provider":"twilio","provider_message_id":"SM0f4e2b7c9a1d3e5f7a9b1c3d5e7f9a1b","purpose":"sign_in","segments":1,"verification_id":"ver-8948904737532090749","version":1}	2026-11-27 06:36:02.915771+00
7	herald.events	sms.fraud_guard.paused	761f0a40-8a7f-4c34-862d-4dd544c454c9	{"event":"sms.fraud_guard.paused","key":"JM","min_conversion":0.1,"occurred_at":"2026-11-27T06:30:00.000Z","pause_seconds":null,"reason":"fraud_guard:region:JM","scope":"region","sent":240,"verified":3,"version":1,"window_minutes":60}	2026-11-27 06:36:02.915771+00
\.


--
-- Data for Name: job_runs; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.job_runs (message_id, job_type, queue, status, attempts, owner_key, claim_token, lease_until, reason, created_at, updated_at, finished_at) FROM stdin;
38fde03a-9c36-4050-bb8a-8fca929bdc1f	sms.verification.v1	herald.sms	completed	1	\N	ca1e1434-4595-4a7b-bb34-196214f3b53b	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
45425fc7-5d11-4cb0-ace1-64320c073afd	sms.verification.v1	herald.sms	completed	1	\N	11052280-7781-45f7-b2b5-34847bc89653	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
45d1b201-8ea0-4b1a-8852-3e9ea1e4296a	sms.verification.v1	herald.sms	rejected	1	\N	1a4c7e2b-6d0f-4a39-9b51-2f8e3c6d7a10	\N	fraud_guard:region:JM	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
c6694b96-a29b-428b-9531-09d304eac6b7	sms.verification.v1	herald.sms	completed	1	\N	5b2e9d41-0c7a-4f68-a3b2-9e1d4c8f7a62	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
378c1d55-1f73-4847-a513-e38abf5a9e3c	push.verification.v1	herald.push	completed	1	\N	e3a1b7c9-2d4f-4e6a-8b0c-1d3e5f7a9b2c	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
f38e5959-87cd-4407-ad17-330a15e1aaf3	push.verification.v1	herald.push	rejected	1	\N	7f9e2d4c-6b8a-4c1e-9d3f-5a7b9c1e3d5f	\N	token_invalid:unregistered	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
3999f1f7-637c-450a-905a-8c5491861297	email.action.v1	herald.email	completed	1	\N	0c2e4a6b-8d1f-4305-a7c9-b1d3e5f7a9c1	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
bffb3a18-6a38-443d-be39-0f12f65619fd	email.action.v1	herald.email	completed	1	\N	9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
85ebf038-b159-4f73-9b71-36b7de599ab2	apple.token.v1	herald.apple	completed	1	\N	2b4d6f8a-1c3e-45a7-9b0d-2e4f6a8c0e1b	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
cleanup-2026-11-26.1	cleanup.run.v1	herald.cleanup	completed	1	\N	3c5e7a9b-1d2f-4a6c-8e0b-3d5f7a9c1e2d	\N	\N	2026-11-26 03:00:01+00	2026-11-26 03:02:37+00	2026-11-26 03:02:37+00
cleanup-2026-11-26.2	cleanup.run.v1	herald.cleanup	completed	1	\N	4d6f8b0c-2e3a-4b7d-9f1c-4e6a8b0d2f3e	\N	\N	2026-11-26 03:00:01+00	2026-11-26 03:02:36+00	2026-11-26 03:02:36+00
41f1092d-f402-44dc-99d0-ab4a9c79e227	push.verification.v1	herald.push	rejected	1	\N	a7c9e1b3-5d6f-4082-b4d6-a8c0e2f4b6d8	\N	token_invalid	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
1a07f540-f5be-4248-ab26-ec0d371b1b2b	email.action.v1	herald.email	completed	1	\N	c2e4a6b8-0d1f-4a3c-95e7-c2d4f6a8b0c3	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
4d42f694-7b19-46ee-a6ab-b909f5e15621	apple.revoke.v1	herald.apple	completed	1	\N	d3f5b7c9-1e2a-4b4d-a6f8-d3e5a7c9b1d4	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
4411389d-9251-463e-9409-c0a5e2e0a132	sms.verification.v1	herald.sms	rejected	1	\N	e4a6c8d0-2f3b-4c5e-b7a9-e4f6b8d0c2e5	\N	fraud_guard:prefix:+232761	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
a0218149-15b3-49af-a43b-9b502ba24992	apple.notification.v1	herald.apple	completed	1	\N	f5b7d9e1-3a4c-4d6f-88ba-f5a7c9e1d3f6	\N	\N	2026-11-23 02:40:12+00	2026-11-23 02:40:12+00	2026-11-23 02:40:12+00
8b3e6f1a-4c2d-4e9b-a7f0-5d1c3b8e2a64	sms.verification.v1	herald.sms	completed	1	\N	06b8d0f2-4a5c-4e7a-9c1b-06d8f0a2c4e6	\N	\N	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00	2026-11-27 06:36:02.915902+00
8dfade90-0180-4959-ae20-22efb83c19ec	apple.notification.v1	herald.apple	completed	1	\N	5e7a9c1d-3f4b-4c8e-a02d-5f7b9c1e3a4f	\N	\N	2026-11-21 10:15:03+00	2026-11-21 10:15:03+00	2026-11-21 10:15:03+00
7c2f3a9e-0d41-4b6e-9a85-3e1f0c2d4b6a	sms.verification.v1	herald.sms	dead	1	\N	6f8b0d2e-4a5c-4d9f-b13e-6a8c0e2f4b5a	\N	phone_number must be an E.164 number: '+' and 8 to 15 digits, not starting with 0	2026-11-25 16:40:00+00	2026-11-25 16:40:00+00	2026-11-25 16:40:00+00
f342a3dc-5eba-4584-b43b-4d1327f0aeec	apple.revoke.v1	herald.apple	retrying	1	\N	8a0c2e4f-6b7d-4e1a-c35f-8b0d2f4a6c7e	\N	Apple answered 503	2026-11-27 06:36:02.916329+00	2026-11-27 06:36:02.916329+00	\N
d97453ed-527f-406e-a7db-2d6554ca59ce	email.action.v1	herald.email	running	1	5247757419333893032	b1d3f5a7-9c0e-4f2b-8d46-b1c3e5a7d9f0	2026-11-27 06:37:02.916442+00	\N	2026-11-27 06:36:02.916442+00	2026-11-27 06:36:02.916442+00	\N
\.


--
-- Data for Name: push_send_attempts; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.push_send_attempts (id, receipt, provider, result, http_status, error_code, provider_message_id, duration_ms, created_at) FROM stdin;
1	rcpt-7c824633-5a2c-4d06-bd06-65ff8fa63a6b	apns	accepted	200	\N	22827639-de36-42cd-984d-4fa63cc9fcbd	87	2026-11-27 06:36:02.897484+00
2	rcpt-4ec4b29e-bfff-45ac-887e-d33064e77f6f	fcm	rejected	404	UNREGISTERED	\N	143	2026-11-27 06:36:02.898344+00
\.


--
-- Data for Name: push_verifications; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.push_verifications (receipt, message_id, platform, environment, app_id, token_hash, state, secret_status, key_id, secret_hash, expires_at, owner_key, sends, uncertain_sends, provider, provider_message_id, http_status, reason, created_at, updated_at, verified_at, consumed_at, consumed_for) FROM stdin;
rcpt-4ec4b29e-bfff-45ac-887e-d33064e77f6f	f38e5959-87cd-4407-ad17-330a15e1aaf3	fcm	production	com.example.herald.android	74d5ae6e863346844edeee1d1179a241d367a8ede582601620e5c8b67cc241d2	failed	void	k2026-11	\N	2026-11-27 06:41:02.898133+00	7382181034025806284	1	0	fcm	\N	404	token_invalid:unregistered	2026-11-27 06:36:02.898133+00	2026-11-27 06:36:02.898418+00	\N	\N	\N
rcpt-136944ed-601e-49ef-87c6-506c39928229	41f1092d-f402-44dc-99d0-ab4a9c79e227	fcm	production	com.example.herald.android	74d5ae6e863346844edeee1d1179a241d367a8ede582601620e5c8b67cc241d2	refused	void	\N	\N	2026-11-27 06:41:02.898599+00	\N	0	0	\N	\N	\N	token_invalid	2026-11-27 06:36:02.898599+00	2026-11-27 06:36:02.898599+00	\N	\N	\N
rcpt-7c824633-5a2c-4d06-bd06-65ff8fa63a6b	378c1d55-1f73-4847-a513-e38abf5a9e3c	apns	production	com.example.herald	6e0a683555bcd73bc99847d00b234a5157b0e0b3254150a8d4209e419b679a75	sent	verified	k2026-11	\\x7537b2685a98d8302f1b67fdb7fd296e710dea5958c576fdca373afa9a7a9fed	2026-11-27 06:41:02.896115+00	5743480534115436898	1	0	apns	22827639-de36-42cd-984d-4fa63cc9fcbd	200	\N	2026-11-27 06:36:02.896115+00	2026-11-27 06:36:02.90552+00	2026-11-27 06:36:02.898056+00	2026-11-27 06:36:02.90552+00	ver-990125889342164524
\.


--
-- Data for Name: sms_app_verifications; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.sms_app_verifications (verification_id, phone_number, method, detail, score, hostname, created_at) FROM stdin;
ver-8948904737532090749	+447700900123	captcha	recaptcha	0.9	app.example.com	2026-11-27 06:36:02.899312+00
ver-990125889342164524	+12025550147	receipt	com.example.herald	\N	\N	2026-11-27 06:36:02.905846+00
\.


--
-- Data for Name: sms_codes; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.sms_codes (id, phone_number, purpose, status, key_id, code_hash, attempts, max_attempts, test_number, sends, created_at, last_sent_at, expires_at, finished_at, guess_limit, guess_window_seconds, lockout_seconds, lockout_max_seconds) FROM stdin;
1	+447700900123	sign_in	verified	k2026-11	\\x8d74da05f020720465fe985d379c4e0c9532c771d71cec5c2c5cb7c2210dab6d	0	5	f	1	2026-11-27 06:36:02.900811+00	2026-11-27 06:36:02.900811+00	2026-11-27 06:46:02.900811+00	2026-11-27 06:36:02.90494+00	10	86400	3600	86400
2	+12025550147	mfa_sign_in	pending	k2026-11	\\x7554a0ebda75e5c9de8a669db8efd043ea75a595898cdf09894a50d117eb82b0	1	5	f	1	2026-11-27 06:36:02.906083+00	2026-11-27 06:36:02.906083+00	2026-11-27 06:46:02.906083+00	\N	10	86400	3600	86400
3	+15555550100	sign_in	pending	k2026-11	\\x0b421794447a0c3f31206acf43bf5411ebbd88627728ea207889dc76cb0e3c71	0	5	t	1	2026-11-27 06:36:02.908939+00	2026-11-27 06:36:02.908939+00	2026-11-27 06:46:02.908939+00	\N	10	86400	3600	86400
4	+447700900456	sign_in	dead	k2026-11	\\x393d641c436ce63b266a0ca0f1dfc689018c6bd8f5460484aa81456730503b6a	5	5	f	1	2026-11-27 06:36:02.909305+00	2026-11-27 06:36:02.909305+00	2026-11-27 06:46:02.909305+00	2026-11-27 06:36:02.910706+00	10	86400	3600	86400
\.


--
-- Data for Name: sms_fraud_counts; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.sms_fraud_counts (scope, key, minute, sent, verified) FROM stdin;
region	JM	2026-11-27 06:36:00+00	240	3
prefix	+1876555	2026-11-27 06:36:00+00	240	3
region	SL	2026-11-27 06:36:00+00	35	1
prefix	+232761	2026-11-27 06:36:00+00	35	1
prefix	+1202555	2026-11-27 06:36:00+00	1	0
region	US	2026-11-27 06:36:00+00	1	0
prefix	+4477009	2026-11-27 06:36:00+00	2	1
region	GB	2026-11-27 06:36:00+00	2	1
\.


--
-- Data for Name: sms_fraud_marks; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.sms_fraud_marks (verification_id, phone_number, region, prefix, created_at) FROM stdin;
ver-8948904737532090749	+447700900123	GB	+4477009	2026-11-27 06:36:02.899523+00
ver-990125889342164524	+12025550147	US	+1202555	2026-11-27 06:36:02.905919+00
ver-2c8e5a1f9b3d	+447700900456	GB	+4477009	2026-11-27 06:36:02.909154+00
\.


--
-- Data for Name: sms_fraud_pauses; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.sms_fraud_pauses (scope, key, state, paused_at, expires_at, sent, verified, pauses, lifted_at, lifted_by, grace_until) FROM stdin;
region	JM	paused	2026-11-27 06:36:02.907966+00	\N	240	3	1	\N	\N	\N
prefix	+232761	lifted	2026-11-27 06:36:02.908457+00	\N	35	1	1	2026-11-27 06:36:02.9087+00	ops@example.com	2026-11-27 07:36:02.9087+00
\.


--
-- Data for Name: sms_guess_failures; Type: TABLE DATA; Schema: herald; Owner: herald
--

COPY herald.sms_guess_failures (phone_number, purpose, failures, lockouts, last_failure_at, locked_until, expires_at) FROM stdin;
+12025550147	mfa_sign_in	1	0	2026-11-27 06:36:02.907219+00	\N	2026-11-28 06:36:02.907219+00
+447700900456	sign_in	5	0	2026-11-27 06:36:02.910706+00	\N	2026-11-28 06:36:02.910706+00
\.


--
-- Data for Name: sms_rate_counters; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.sms_rate_counters (scope, key, window_start, count, expires_at) FROM stdin;
global	shard-3600-8	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
ip	203.0.113.7	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
phone	+447700900123	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
global	shard-3600-15	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
ip	2001:db8:4a1c:77::/64	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
phone	+12025550147	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
prefix	+12025550	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
global	shard-3600-11	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
ip	203.0.113.88	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
phone	+447700900456	2026-11-27 06:36:00+00	1	2026-11-27 07:42:00+00
prefix	+447700900	2026-11-27 06:36:00+00	2	2026-11-27 07:42:00+00
\.


--
-- Data for Name: sms_send_attempts; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.sms_send_attempts (id, verification_id, provider, result, http_status, error_code, provider_message_id, duration_ms, created_at) FROM stdin;
1	ver-8948904737532090749	twilio	accepted	201	\N	SM0f4e2b7c9a1d3e5f7a9b1c3d5e7f9a1b	231	2026-11-27 06:36:02.90403+00
2	ver-990125889342164524	twilio	timeout	\N	timeout	\N	10000	2026-11-27 06:36:02.906646+00
3	ver-990125889342164524	outbox	accepted	\N	\N	outbox-45425fc7-5d11-4cb0-ace1-64320c073afd	4	2026-11-27 06:36:02.906646+00
4	ver-2c8e5a1f9b3d	twilio	accepted	201	\N	SM7a1c9e3b5d7f9a1c3e5b7d9f1a3c5e7b	198	2026-11-27 06:36:02.909764+00
\.


--
-- Data for Name: sms_verifications; Type: TABLE DATA; Schema: herald; Owner: herald_migrate
--

COPY herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, code_sends, owner_key, reason, provider, provider_message_id, segments, encoding, uncertain_sends, created_at, updated_at) FROM stdin;
ver-8948904737532090749	1	+447700900123	sign_in	38fde03a-9c36-4050-bb8a-8fca929bdc1f	sent	1	8948904737532090749	\N	twilio	SM0f4e2b7c9a1d3e5f7a9b1c3d5e7f9a1b	1	GSM-7	0	2026-11-27 06:36:02.900811+00	2026-11-27 06:36:02.904336+00
ver-990125889342164524	2	+12025550147	mfa_sign_in	45425fc7-5d11-4cb0-ace1-64320c073afd	sent	1	990125889342164524	\N	outbox	outbox-45425fc7-5d11-4cb0-ace1-64320c073afd	1	GSM-7	1	2026-11-27 06:36:02.906083+00	2026-11-27 06:36:02.90702+00
ver-3c9d2e7a41b0	\N	+18765550123	sign_in	45d1b201-8ea0-4b1a-8852-3e9ea1e4296a	refused	\N	\N	fraud_guard:region:JM	\N	\N	\N	\N	0	2026-11-27 06:36:02.908365+00	2026-11-27 06:36:02.908365+00
ver-5d1e8f0b22c7	\N	+23276123456	sign_in	4411389d-9251-463e-9409-c0a5e2e0a132	refused	\N	\N	fraud_guard:prefix:+232761	\N	\N	\N	\N	0	2026-11-27 06:36:02.908621+00	2026-11-27 06:36:02.908621+00
ver-test-0001	3	+15555550100	sign_in	c6694b96-a29b-428b-9531-09d304eac6b7	test	1	8948904737532090749	\N	\N	\N	\N	\N	0	2026-11-27 06:36:02.908939+00	2026-11-27 06:36:02.908939+00
ver-2c8e5a1f9b3d	4	+447700900456	sign_in	8b3e6f1a-4c2d-4e9b-a7f0-5d1c3b8e2a64	sent	1	8948904737532090749	\N	twilio	SM7a1c9e3b5d7f9a1c3e5b7d9f1a3c5e7b	1	GSM-7	0	2026-11-27 06:36:02.909305+00	2026-11-27 06:36:02.909847+00
\.


--
-- Data for Name: herald_schema_migrations; Type: TABLE DATA; Schema: public; Owner: herald_migrate
--

COPY public.herald_schema_migrations (version, name, applied_at) FROM stdin;
1	platform	2026-11-27 06:16:26.689054+00
2	sms	2026-11-27 06:16:26.696504+00
3	cleanup	2026-11-27 06:16:26.709759+00
4	email	2026-11-27 06:16:26.719527+00
5	push	2026-11-27 06:16:26.726161+00
6	email_attempts_and_prepare	2026-11-27 06:16:26.732567+00
7	push_attempts	2026-11-27 06:16:26.736704+00
8	sms_exhausted_and_bound_ids	2026-11-27 06:16:26.740115+00
9	push_exhausted_and_bound_receipts	2026-11-27 06:16:26.743837+00
10	email_supersede_and_recovery	2026-11-27 06:16:26.746787+00
11	cleanup_deletion_dates	2026-11-27 06:16:26.752105+00
12	database_roles	2026-11-27 06:16:26.756754+00
14	sms_sliding_limits_and_guessing	2026-11-27 06:16:26.772275+00
15	email_send_limits	2026-11-27 06:16:26.779696+00
16	sms_fraud_guard	2026-11-27 06:16:26.784569+00
17	push_receipt_consume	2026-11-27 06:16:26.793594+00
18	sms_app_verifications	2026-11-27 06:16:26.79572+00
19	apple_tokens	2026-11-27 06:16:26.798413+00
21	apple_relay_addresses	2026-11-27 06:16:26.807879+00
22	apple_notifications	2026-11-27 06:16:26.80996+00
23	sms_prepare_batch	2026-11-27 06:16:26.813219+00
24	email_generic_plans	2026-11-27 06:16:26.818306+00
25	cleanup_run_pauses	2026-11-27 06:16:26.820266+00
26	push_generic_plans	2026-11-27 06:16:26.821782+00
27	sms_fraud_counts_per_statement	2026-11-27 06:16:26.823702+00
28	sms_prepare_batch_judges_each_counter_once	2026-11-27 06:16:26.8274+00
29	sms_prepare_batch_locks_counters_in_one_order	2026-11-27 06:16:26.830984+00
\.


--
-- Name: apple_attempts_id_seq; Type: SEQUENCE SET; Schema: herald; Owner: herald
--

SELECT pg_catalog.setval('herald.apple_attempts_id_seq', 2, true);


--
-- Name: dev_outbox_id_seq; Type: SEQUENCE SET; Schema: herald; Owner: herald_migrate
--

SELECT pg_catalog.setval('herald.dev_outbox_id_seq', 2, true);


--
-- Name: email_codes_id_seq; Type: SEQUENCE SET; Schema: herald; Owner: herald_migrate
--

SELECT pg_catalog.setval('herald.email_codes_id_seq', 3, true);


--
-- Name: email_send_attempts_id_seq; Type: SEQUENCE SET; Schema: herald; Owner: herald_migrate
--

SELECT pg_catalog.setval('herald.email_send_attempts_id_seq', 3, true);


--
-- Name: event_outbox_id_seq; Type: SEQUENCE SET; Schema: herald; Owner: herald_migrate
--

SELECT pg_catalog.setval('herald.event_outbox_id_seq', 7, true);


--
-- Name: push_send_attempts_id_seq; Type: SEQUENCE SET; Schema: herald; Owner: herald_migrate
--

SELECT pg_catalog.setval('herald.push_send_attempts_id_seq', 2, true);


--
-- Name: sms_codes_id_seq; Type: SEQUENCE SET; Schema: herald; Owner: herald_migrate
--

SELECT pg_catalog.setval('herald.sms_codes_id_seq', 4, true);


--
-- Name: sms_send_attempts_id_seq; Type: SEQUENCE SET; Schema: herald; Owner: herald_migrate
--

SELECT pg_catalog.setval('herald.sms_send_attempts_id_seq', 4, true);


--
-- Name: account_providers account_providers_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.account_providers
    ADD CONSTRAINT account_providers_pkey PRIMARY KEY (account_id, provider);


--
-- Name: account_providers account_providers_provider_provider_uid_key; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.account_providers
    ADD CONSTRAINT account_providers_provider_provider_uid_key UNIQUE (provider, provider_uid);


--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);


--
-- Name: apple_attempts apple_attempts_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.apple_attempts
    ADD CONSTRAINT apple_attempts_pkey PRIMARY KEY (id);


--
-- Name: apple_jobs apple_jobs_code_hash_key; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.apple_jobs
    ADD CONSTRAINT apple_jobs_code_hash_key UNIQUE (code_hash);


--
-- Name: apple_jobs apple_jobs_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.apple_jobs
    ADD CONSTRAINT apple_jobs_pkey PRIMARY KEY (message_id);


--
-- Name: apple_notifications apple_notifications_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.apple_notifications
    ADD CONSTRAINT apple_notifications_pkey PRIMARY KEY (jti);


--
-- Name: apple_relay_addresses apple_relay_addresses_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.apple_relay_addresses
    ADD CONSTRAINT apple_relay_addresses_pkey PRIMARY KEY (address_hash);


--
-- Name: apple_tokens apple_tokens_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.apple_tokens
    ADD CONSTRAINT apple_tokens_pkey PRIMARY KEY (account_id, client_id);


--
-- Name: cleanup_policy cleanup_policy_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.cleanup_policy
    ADD CONSTRAINT cleanup_policy_pkey PRIMARY KEY (singleton);


--
-- Name: cleanup_runs cleanup_runs_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.cleanup_runs
    ADD CONSTRAINT cleanup_runs_pkey PRIMARY KEY (id);


--
-- Name: dev_outbox dev_outbox_message_id_key; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.dev_outbox
    ADD CONSTRAINT dev_outbox_message_id_key UNIQUE (message_id);


--
-- Name: dev_outbox dev_outbox_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.dev_outbox
    ADD CONSTRAINT dev_outbox_pkey PRIMARY KEY (id);


--
-- Name: device_tokens device_tokens_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.device_tokens
    ADD CONSTRAINT device_tokens_pkey PRIMARY KEY (token_hash);


--
-- Name: email_codes email_codes_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.email_codes
    ADD CONSTRAINT email_codes_pkey PRIMARY KEY (id);


--
-- Name: email_rate_counters email_rate_counters_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.email_rate_counters
    ADD CONSTRAINT email_rate_counters_pkey PRIMARY KEY (scope, key, window_start);


--
-- Name: email_requests email_requests_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.email_requests
    ADD CONSTRAINT email_requests_pkey PRIMARY KEY (request_id);


--
-- Name: email_send_attempts email_send_attempts_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.email_send_attempts
    ADD CONSTRAINT email_send_attempts_pkey PRIMARY KEY (id);


--
-- Name: event_outbox event_outbox_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.event_outbox
    ADD CONSTRAINT event_outbox_pkey PRIMARY KEY (id);


--
-- Name: job_runs job_runs_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.job_runs
    ADD CONSTRAINT job_runs_pkey PRIMARY KEY (message_id);


--
-- Name: push_send_attempts push_send_attempts_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.push_send_attempts
    ADD CONSTRAINT push_send_attempts_pkey PRIMARY KEY (id);


--
-- Name: push_verifications push_verifications_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.push_verifications
    ADD CONSTRAINT push_verifications_pkey PRIMARY KEY (receipt);


--
-- Name: sms_app_verifications sms_app_verifications_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.sms_app_verifications
    ADD CONSTRAINT sms_app_verifications_pkey PRIMARY KEY (verification_id);


--
-- Name: sms_codes sms_codes_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.sms_codes
    ADD CONSTRAINT sms_codes_pkey PRIMARY KEY (id);


--
-- Name: sms_fraud_counts sms_fraud_counts_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.sms_fraud_counts
    ADD CONSTRAINT sms_fraud_counts_pkey PRIMARY KEY (scope, key, minute);


--
-- Name: sms_fraud_marks sms_fraud_marks_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.sms_fraud_marks
    ADD CONSTRAINT sms_fraud_marks_pkey PRIMARY KEY (verification_id);


--
-- Name: sms_fraud_pauses sms_fraud_pauses_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.sms_fraud_pauses
    ADD CONSTRAINT sms_fraud_pauses_pkey PRIMARY KEY (scope, key);


--
-- Name: sms_guess_failures sms_guess_failures_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald
--

ALTER TABLE ONLY herald.sms_guess_failures
    ADD CONSTRAINT sms_guess_failures_pkey PRIMARY KEY (phone_number, purpose);


--
-- Name: sms_rate_counters sms_rate_counters_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.sms_rate_counters
    ADD CONSTRAINT sms_rate_counters_pkey PRIMARY KEY (scope, key, window_start);


--
-- Name: sms_send_attempts sms_send_attempts_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.sms_send_attempts
    ADD CONSTRAINT sms_send_attempts_pkey PRIMARY KEY (id);


--
-- Name: sms_verifications sms_verifications_pkey; Type: CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.sms_verifications
    ADD CONSTRAINT sms_verifications_pkey PRIMARY KEY (verification_id);


--
-- Name: herald_schema_migrations herald_schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: herald_migrate
--

ALTER TABLE ONLY public.herald_schema_migrations
    ADD CONSTRAINT herald_schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: account_providers_email_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX account_providers_email_idx ON herald.account_providers USING btree (lower(provider_uid)) WHERE (provider = ANY (ARRAY['password'::text, 'emailLink'::text]));


--
-- Name: accounts_anonymous_created_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX accounts_anonymous_created_idx ON herald.accounts USING btree (created_at) WHERE is_anonymous;


--
-- Name: accounts_delete_after_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX accounts_delete_after_idx ON herald.accounts USING btree (delete_after) WHERE (delete_after IS NOT NULL);


--
-- Name: apple_attempts_created_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX apple_attempts_created_idx ON herald.apple_attempts USING btree (created_at);


--
-- Name: apple_attempts_message_id_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX apple_attempts_message_id_idx ON herald.apple_attempts USING btree (message_id);


--
-- Name: apple_jobs_account_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX apple_jobs_account_idx ON herald.apple_jobs USING btree (account_id);


--
-- Name: apple_jobs_updated_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX apple_jobs_updated_idx ON herald.apple_jobs USING btree (updated_at);


--
-- Name: apple_notifications_account_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX apple_notifications_account_idx ON herald.apple_notifications USING btree (account_id) WHERE (account_id IS NOT NULL);


--
-- Name: apple_notifications_received_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX apple_notifications_received_idx ON herald.apple_notifications USING btree (received_at);


--
-- Name: cleanup_runs_ended_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX cleanup_runs_ended_idx ON herald.cleanup_runs USING btree (ended_at) WHERE (ended_at IS NOT NULL);


--
-- Name: cleanup_runs_one_active_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE UNIQUE INDEX cleanup_runs_one_active_idx ON herald.cleanup_runs USING btree ((true)) WHERE ((status = ANY (ARRAY['scheduled'::text, 'running'::text])) AND (NOT dry_run));


--
-- Name: cleanup_runs_requested_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX cleanup_runs_requested_idx ON herald.cleanup_runs USING btree (requested_at DESC);


--
-- Name: dev_outbox_created_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX dev_outbox_created_idx ON herald.dev_outbox USING btree (created_at);


--
-- Name: device_tokens_updated_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX device_tokens_updated_idx ON herald.device_tokens USING btree (updated_at);


--
-- Name: email_codes_expires_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX email_codes_expires_idx ON herald.email_codes USING btree (expires_at);


--
-- Name: email_codes_hash_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE UNIQUE INDEX email_codes_hash_idx ON herald.email_codes USING btree (code_hash);


--
-- Name: email_codes_pending_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX email_codes_pending_idx ON herald.email_codes USING btree (email, mode) WHERE (status = 'pending'::text);


--
-- Name: email_codes_request_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX email_codes_request_idx ON herald.email_codes USING btree (request_id);


--
-- Name: email_rate_counters_expires_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX email_rate_counters_expires_idx ON herald.email_rate_counters USING btree (expires_at);


--
-- Name: email_requests_created_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX email_requests_created_idx ON herald.email_requests USING btree (created_at);


--
-- Name: email_send_attempts_created_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX email_send_attempts_created_idx ON herald.email_send_attempts USING btree (created_at);


--
-- Name: email_send_attempts_request_id_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX email_send_attempts_request_id_idx ON herald.email_send_attempts USING btree (request_id);


--
-- Name: event_outbox_exchange_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX event_outbox_exchange_idx ON herald.event_outbox USING btree (exchange, id);


--
-- Name: job_runs_finished_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX job_runs_finished_idx ON herald.job_runs USING btree (finished_at) WHERE (finished_at IS NOT NULL);


--
-- Name: job_runs_status_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX job_runs_status_idx ON herald.job_runs USING btree (queue, status);


--
-- Name: push_send_attempts_created_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX push_send_attempts_created_idx ON herald.push_send_attempts USING btree (created_at);


--
-- Name: push_send_attempts_receipt_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX push_send_attempts_receipt_idx ON herald.push_send_attempts USING btree (receipt);


--
-- Name: push_verifications_expires_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX push_verifications_expires_idx ON herald.push_verifications USING btree (expires_at);


--
-- Name: push_verifications_token_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX push_verifications_token_idx ON herald.push_verifications USING btree (token_hash);


--
-- Name: sms_app_verifications_created_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX sms_app_verifications_created_idx ON herald.sms_app_verifications USING btree (created_at);


--
-- Name: sms_codes_expires_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX sms_codes_expires_idx ON herald.sms_codes USING btree (expires_at);


--
-- Name: sms_codes_pending_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE UNIQUE INDEX sms_codes_pending_idx ON herald.sms_codes USING btree (phone_number, purpose) WHERE (status = 'pending'::text);


--
-- Name: sms_fraud_counts_minute_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX sms_fraud_counts_minute_idx ON herald.sms_fraud_counts USING btree (minute);


--
-- Name: sms_fraud_marks_created_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX sms_fraud_marks_created_idx ON herald.sms_fraud_marks USING btree (created_at);


--
-- Name: sms_guess_failures_expires_idx; Type: INDEX; Schema: herald; Owner: herald
--

CREATE INDEX sms_guess_failures_expires_idx ON herald.sms_guess_failures USING btree (expires_at);


--
-- Name: sms_rate_counters_expires_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX sms_rate_counters_expires_idx ON herald.sms_rate_counters USING btree (expires_at);


--
-- Name: sms_send_attempts_created_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX sms_send_attempts_created_idx ON herald.sms_send_attempts USING btree (created_at);


--
-- Name: sms_send_attempts_verification_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX sms_send_attempts_verification_idx ON herald.sms_send_attempts USING btree (verification_id);


--
-- Name: sms_verifications_code_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX sms_verifications_code_idx ON herald.sms_verifications USING btree (code_id);


--
-- Name: sms_verifications_created_idx; Type: INDEX; Schema: herald; Owner: herald_migrate
--

CREATE INDEX sms_verifications_created_idx ON herald.sms_verifications USING btree (created_at);


--
-- Name: account_providers account_providers_upgrade; Type: TRIGGER; Schema: herald; Owner: herald_migrate
--

CREATE TRIGGER account_providers_upgrade AFTER INSERT ON herald.account_providers FOR EACH ROW EXECUTE FUNCTION herald.account_provider_linked();


--
-- Name: accounts accounts_apple_revoke; Type: TRIGGER; Schema: herald; Owner: herald_migrate
--

CREATE TRIGGER accounts_apple_revoke AFTER DELETE ON herald.accounts REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION herald.apple_revoke_deleted_accounts();


--
-- Name: sms_codes sms_codes_fraud_guard_verified; Type: TRIGGER; Schema: herald; Owner: herald_migrate
--

CREATE TRIGGER sms_codes_fraud_guard_verified AFTER UPDATE OF status ON herald.sms_codes FOR EACH ROW WHEN (((new.status = 'verified'::text) AND (old.status IS DISTINCT FROM 'verified'::text))) EXECUTE FUNCTION herald.fraud_guard_verified();


--
-- Name: sms_verifications sms_verifications_fraud_guard_sent; Type: TRIGGER; Schema: herald; Owner: herald_migrate
--

CREATE TRIGGER sms_verifications_fraud_guard_sent AFTER UPDATE ON herald.sms_verifications REFERENCING OLD TABLE AS sent_before NEW TABLE AS sent_after FOR EACH STATEMENT EXECUTE FUNCTION herald.fraud_guard_sent();


--
-- Name: account_providers account_providers_account_id_fkey; Type: FK CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.account_providers
    ADD CONSTRAINT account_providers_account_id_fkey FOREIGN KEY (account_id) REFERENCES herald.accounts(id) ON DELETE CASCADE;


--
-- Name: email_codes email_codes_request_id_fkey; Type: FK CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.email_codes
    ADD CONSTRAINT email_codes_request_id_fkey FOREIGN KEY (request_id) REFERENCES herald.email_requests(request_id) ON DELETE CASCADE;


--
-- Name: sms_verifications sms_verifications_code_id_fkey; Type: FK CONSTRAINT; Schema: herald; Owner: herald_migrate
--

ALTER TABLE ONLY herald.sms_verifications
    ADD CONSTRAINT sms_verifications_code_id_fkey FOREIGN KEY (code_id) REFERENCES herald.sms_codes(id) ON DELETE CASCADE;


--
-- Name: SCHEMA herald; Type: ACL; Schema: -; Owner: herald_migrate
--

GRANT USAGE ON SCHEMA herald TO herald_worker;


--
-- Name: FUNCTION account_provider_linked(); Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON FUNCTION herald.account_provider_linked() TO herald_worker;


--
-- Name: FUNCTION apple_exhausted(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_reason text); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.apple_exhausted(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_reason text) TO herald_worker;


--
-- Name: FUNCTION apple_prepare(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_code_hash text, p_step text, p_owner_key bigint); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.apple_prepare(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_code_hash text, p_step text, p_owner_key bigint) TO herald_worker;


--
-- Name: FUNCTION apple_revoke_deleted_accounts(); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.apple_revoke_deleted_accounts() TO herald_worker;


--
-- Name: FUNCTION email_prepare(p_request_id text, p_message_id text, p_email text, p_mode text, p_state text, p_owner_key bigint, p_key_id text, p_code_hash bytea, p_settings jsonb, p_expires_seconds integer, p_paired_email text, p_recovery_job text, p_recovery_exchange text, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[]); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.email_prepare(p_request_id text, p_message_id text, p_email text, p_mode text, p_state text, p_owner_key bigint, p_key_id text, p_code_hash bytea, p_settings jsonb, p_expires_seconds integer, p_paired_email text, p_recovery_job text, p_recovery_exchange text, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[]) TO herald_worker;


--
-- Name: FUNCTION email_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.email_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone) TO herald_worker;


--
-- Name: FUNCTION email_use_code(p_id bigint); Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON FUNCTION herald.email_use_code(p_id bigint) TO herald_worker;


--
-- Name: FUNCTION fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer) TO herald_worker;


--
-- Name: FUNCTION fraud_guard_count(p_region text, p_prefix text, p_sent integer, p_verified integer); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.fraud_guard_count(p_region text, p_prefix text, p_sent integer, p_verified integer) TO herald_worker;


--
-- Name: FUNCTION fraud_guard_lift(p_scope text, p_key text, p_by text, p_grace_seconds integer); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.fraud_guard_lift(p_scope text, p_key text, p_by text, p_grace_seconds integer) TO herald_worker;


--
-- Name: FUNCTION fraud_guard_sent(); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.fraud_guard_sent() TO herald_worker;


--
-- Name: FUNCTION fraud_guard_verified(); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.fraud_guard_verified() TO herald_worker;


--
-- Name: FUNCTION push_exhausted(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_reason text); Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON FUNCTION herald.push_exhausted(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_reason text) TO herald_worker;


--
-- Name: FUNCTION push_prepare(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_token_hint text, p_key_id text, p_secret_hash bytea, p_ttl_seconds integer, p_rate_max integer, p_rate_window_seconds integer, p_owner_key bigint); Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON FUNCTION herald.push_prepare(p_receipt text, p_message_id text, p_platform text, p_environment text, p_app_id text, p_token_hash text, p_token_hint text, p_key_id text, p_secret_hash bytea, p_ttl_seconds integer, p_rate_max integer, p_rate_window_seconds integer, p_owner_key bigint) TO herald_worker;


--
-- Name: FUNCTION push_receipt_consume(p_receipt text, p_app_id text, p_max_age_seconds integer, p_for text); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.push_receipt_consume(p_receipt text, p_app_id text, p_max_age_seconds integer, p_for text) TO herald_worker;


--
-- Name: FUNCTION sms_batch_limits(p_fast integer[], p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone, p_shard integer); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.sms_batch_limits(p_fast integer[], p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone, p_shard integer) TO herald_worker;


--
-- Name: FUNCTION sms_exhausted(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_reason text); Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON FUNCTION herald.sms_exhausted(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_reason text) TO herald_worker;


--
-- Name: FUNCTION sms_guess_failed(p_code_id bigint); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.sms_guess_failed(p_code_id bigint) TO herald_worker;


--
-- Name: FUNCTION sms_prepare(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_force boolean, p_test boolean, p_key_id text, p_code_hash bytea, p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.sms_prepare(p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_force boolean, p_test boolean, p_key_id text, p_code_hash bytea, p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer) TO herald_worker;


--
-- Name: FUNCTION sms_prepare_batch(p_ids text[], p_message_ids text[], p_phones text[], p_purposes text[], p_forces boolean[], p_tests boolean[], p_key_ids text[], p_hashes bytea[], p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.sms_prepare_batch(p_ids text[], p_message_ids text[], p_phones text[], p_purposes text[], p_forces boolean[], p_tests boolean[], p_key_ids text[], p_hashes bytea[], p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer, p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint, p_guess_limit integer, p_guess_window_seconds integer, p_lockout_seconds integer, p_lockout_max_seconds integer) TO herald_worker;


--
-- Name: FUNCTION sms_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone); Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON FUNCTION herald.sms_rate_take(p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone) TO herald_worker;


--
-- Name: TABLE account_providers; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.account_providers TO herald_worker;


--
-- Name: TABLE accounts; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.accounts TO herald_worker;


--
-- Name: TABLE apple_attempts; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.apple_attempts TO herald_worker;


--
-- Name: SEQUENCE apple_attempts_id_seq; Type: ACL; Schema: herald; Owner: herald
--

GRANT ALL ON SEQUENCE herald.apple_attempts_id_seq TO herald_worker;


--
-- Name: TABLE apple_jobs; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.apple_jobs TO herald_worker;


--
-- Name: TABLE apple_notifications; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.apple_notifications TO herald_worker;


--
-- Name: TABLE apple_relay_addresses; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.apple_relay_addresses TO herald_worker;


--
-- Name: TABLE apple_tokens; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.apple_tokens TO herald_worker;


--
-- Name: TABLE cleanup_policy; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.cleanup_policy TO herald_worker;


--
-- Name: TABLE cleanup_runs; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.cleanup_runs TO herald_worker;


--
-- Name: TABLE dev_outbox; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.dev_outbox TO herald_worker;


--
-- Name: SEQUENCE dev_outbox_id_seq; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON SEQUENCE herald.dev_outbox_id_seq TO herald_worker;


--
-- Name: TABLE device_tokens; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.device_tokens TO herald_worker;


--
-- Name: TABLE email_codes; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.email_codes TO herald_worker;


--
-- Name: SEQUENCE email_codes_id_seq; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON SEQUENCE herald.email_codes_id_seq TO herald_worker;


--
-- Name: TABLE email_rate_counters; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.email_rate_counters TO herald_worker;


--
-- Name: TABLE email_requests; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.email_requests TO herald_worker;


--
-- Name: TABLE email_send_attempts; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.email_send_attempts TO herald_worker;


--
-- Name: SEQUENCE email_send_attempts_id_seq; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON SEQUENCE herald.email_send_attempts_id_seq TO herald_worker;


--
-- Name: TABLE event_outbox; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.event_outbox TO herald_worker;


--
-- Name: SEQUENCE event_outbox_id_seq; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON SEQUENCE herald.event_outbox_id_seq TO herald_worker;


--
-- Name: TABLE job_runs; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.job_runs TO herald_worker;


--
-- Name: TABLE push_send_attempts; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.push_send_attempts TO herald_worker;


--
-- Name: SEQUENCE push_send_attempts_id_seq; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON SEQUENCE herald.push_send_attempts_id_seq TO herald_worker;


--
-- Name: TABLE push_verifications; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.push_verifications TO herald_worker;


--
-- Name: TABLE sms_app_verifications; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_app_verifications TO herald_worker;


--
-- Name: TABLE sms_codes; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_codes TO herald_worker;


--
-- Name: SEQUENCE sms_codes_id_seq; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON SEQUENCE herald.sms_codes_id_seq TO herald_worker;


--
-- Name: TABLE sms_fraud_counts; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_fraud_counts TO herald_worker;


--
-- Name: TABLE sms_fraud_marks; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_fraud_marks TO herald_worker;


--
-- Name: TABLE sms_fraud_pauses; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_fraud_pauses TO herald_worker;


--
-- Name: TABLE sms_guess_failures; Type: ACL; Schema: herald; Owner: herald
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_guess_failures TO herald_worker;


--
-- Name: TABLE sms_rate_counters; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_rate_counters TO herald_worker;


--
-- Name: TABLE sms_send_attempts; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_send_attempts TO herald_worker;


--
-- Name: SEQUENCE sms_send_attempts_id_seq; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT ALL ON SEQUENCE herald.sms_send_attempts_id_seq TO herald_worker;


--
-- Name: TABLE sms_verifications; Type: ACL; Schema: herald; Owner: herald_migrate
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE herald.sms_verifications TO herald_worker;


--
-- Name: TABLE herald_schema_migrations; Type: ACL; Schema: public; Owner: herald_migrate
--

GRANT SELECT ON TABLE public.herald_schema_migrations TO herald_worker;


--
-- Name: DEFAULT PRIVILEGES FOR SEQUENCES; Type: DEFAULT ACL; Schema: herald; Owner: herald
--

ALTER DEFAULT PRIVILEGES FOR ROLE herald IN SCHEMA herald GRANT ALL ON SEQUENCES  TO herald_worker;


--
-- Name: DEFAULT PRIVILEGES FOR SEQUENCES; Type: DEFAULT ACL; Schema: herald; Owner: herald_migrate
--

ALTER DEFAULT PRIVILEGES FOR ROLE herald_migrate IN SCHEMA herald GRANT ALL ON SEQUENCES  TO herald_worker;


--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: herald; Owner: herald
--

ALTER DEFAULT PRIVILEGES FOR ROLE herald IN SCHEMA herald GRANT ALL ON FUNCTIONS  TO herald_worker;


--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: herald; Owner: herald_migrate
--

ALTER DEFAULT PRIVILEGES FOR ROLE herald_migrate IN SCHEMA herald GRANT ALL ON FUNCTIONS  TO herald_worker;


--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: herald; Owner: herald
--

ALTER DEFAULT PRIVILEGES FOR ROLE herald IN SCHEMA herald GRANT SELECT,INSERT,DELETE,UPDATE ON TABLES  TO herald_worker;


--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: herald; Owner: herald_migrate
--

ALTER DEFAULT PRIVILEGES FOR ROLE herald_migrate IN SCHEMA herald GRANT SELECT,INSERT,DELETE,UPDATE ON TABLES  TO herald_worker;


--
-- PostgreSQL database dump complete
--

\unrestrict eYg7nsvfkiGhnikVyoXozxKau0lvN30V5c5Hkp88zKd2jYDB7U4fMkrTOqDgfCT

