import HeraldRuntime
/// The schema of HeraldSMS.
public enum SMSSchema {
    /// Migration 2: phone verification codes, the verifications that point at them, provider
    /// attempts and the rate-limit counters; `herald.sms_prepare` decides a job in one round trip.
    public static let migrations = [Migration(version: 2, name: "sms", sql: """
        -- One code per phone number and purpose while pending. Only its keyed hash is stored.
        CREATE TABLE herald.sms_codes (
            id            bigserial PRIMARY KEY,
            phone_number  text NOT NULL,
            purpose       text NOT NULL,
            status        text NOT NULL CHECK (status IN ('pending','verified','dead','expired','failed')),
            key_id        text NOT NULL,
            code_hash     bytea NOT NULL,
            attempts      integer NOT NULL DEFAULT 0,
            max_attempts  integer NOT NULL,
            test_number   boolean NOT NULL DEFAULT false,
            sends         integer NOT NULL DEFAULT 0,
            created_at    timestamptz NOT NULL DEFAULT now(),
            last_sent_at  timestamptz,
            expires_at    timestamptz NOT NULL,
            finished_at   timestamptz
        );
        CREATE UNIQUE INDEX sms_codes_pending_idx ON herald.sms_codes (phone_number, purpose) WHERE status = 'pending';
        CREATE INDEX sms_codes_expires_idx ON herald.sms_codes (expires_at);

        -- One row per verification id (per sms.verification job); several may share a code.
        CREATE TABLE herald.sms_verifications (
            verification_id      text PRIMARY KEY,
            code_id              bigint REFERENCES herald.sms_codes (id) ON DELETE CASCADE,
            phone_number         text NOT NULL,
            purpose              text NOT NULL,
            message_id           text NOT NULL,
            state                text NOT NULL CHECK (state IN ('sending','retrying','sent','reused','test','refused','failed')),
            -- The code's `sends` this verification's SMS carried: a later send of the code supersedes it.
            code_sends           integer,
            -- The presence key of the worker that set `sending` (its advisory lock is held while it lives).
            owner_key            bigint,
            reason               text,
            provider             text,
            provider_message_id  text,
            segments             integer,
            encoding             text,
            uncertain_sends      integer NOT NULL DEFAULT 0,
            created_at           timestamptz NOT NULL DEFAULT now(),
            updated_at           timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX sms_verifications_code_idx ON herald.sms_verifications (code_id);
        CREATE INDEX sms_verifications_created_idx ON herald.sms_verifications (created_at);

        -- Every provider call: which provider, how it answered.
        CREATE TABLE herald.sms_send_attempts (
            id                   bigserial PRIMARY KEY,
            verification_id      text NOT NULL,
            provider             text NOT NULL,
            result               text NOT NULL CHECK (result IN ('accepted','rejected','transient','timeout')),
            http_status          integer,
            error_code           text,
            provider_message_id  text,
            duration_ms          integer NOT NULL,
            created_at           timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX sms_send_attempts_verification_idx ON herald.sms_send_attempts (verification_id);
        CREATE INDEX sms_send_attempts_created_idx ON herald.sms_send_attempts (created_at);

        -- Fixed-window counters shared by every worker: scope (phone, prefix, ip, global, resend), key, window.
        CREATE TABLE herald.sms_rate_counters (
            scope         text NOT NULL,
            key           text NOT NULL,
            window_start  timestamptz NOT NULL,
            count         integer NOT NULL,
            expires_at    timestamptz NOT NULL,
            PRIMARY KEY (scope, key, window_start)
        );
        CREATE INDEX sms_rate_counters_expires_idx ON herald.sms_rate_counters (expires_at);

        -- Decides an sms.verification job atomically (one round trip):
        --   send     the caller sends the code it hashed (p_code_hash); o_uncertain: an earlier try of
        --            this verification may have reached a provider (a crash between its answer and our commit)
        --   reused   a code sent less than p_resend_interval_seconds ago answers this verification too
        --   test     a test number: the fixed code is stored, nothing is sent
        --   refused  a rate limit (o_reason); refused requests use no quota
        --   done     this verification was decided before (o_reason: its state)
        --   closed   a retry whose code was used, killed or expired meanwhile: nothing to send
        --   busy     a send of this verification, or of the pending code it would share, is under
        --            way (`sending` by a worker whose presence lock is held): decide again later
        CREATE FUNCTION herald.sms_prepare(
            p_verification_id text, p_message_id text, p_phone text, p_purpose text,
            p_force boolean, p_test boolean, p_key_id text, p_code_hash bytea,
            p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer,
            p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint
        ) RETURNS TABLE (o_decision text, o_reason text, o_uncertain boolean)
        LANGUAGE plpgsql AS $$
        DECLARE
            ver herald.sms_verifications%ROWTYPE;
            cur herald.sms_codes%ROWTYPE;
            have_code boolean;
            code_row bigint;
            n bigint;
            win timestamptz;
            counter_key text;
            refused text;
            undo_scopes text[] := '{}';
            undo_keys text[] := '{}';
            undo_wins timestamptz[] := '{}';
            n_sent bigint;
            n_sending bigint;
            new_sends integer;
        BEGIN
            SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
            IF FOUND THEN
                IF ver.state NOT IN ('sending', 'retrying') THEN
                    RETURN QUERY SELECT 'done'::text, ver.state, false;
                    RETURN;
                END IF;
                -- Another job of this verification is calling a provider right now.
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
                    -- Another request sent the code again since: that SMS answers this verification.
                    UPDATE herald.sms_verifications SET state = 'reused', updated_at = now()
                     WHERE verification_id = p_verification_id;
                    RETURN QUERY SELECT 'reused'::text, NULL::text, false;
                    RETURN;
                END IF;
                -- A retry, or a redelivery after a crash: a fresh code replaces the one nobody may have received.
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

            SELECT * INTO cur FROM herald.sms_codes
             WHERE phone_number = p_phone AND purpose = p_purpose AND status = 'pending' FOR UPDATE;
            have_code := FOUND;
            IF have_code AND cur.expires_at <= now() THEN
                UPDATE herald.sms_codes SET status = 'expired', finished_at = now() WHERE id = cur.id;
                have_code := false;
            END IF;

            IF NOT p_test AND have_code AND NOT p_force AND NOT cur.test_number
               AND cur.last_sent_at > now() - make_interval(secs => p_resend_interval_seconds) THEN
                -- Reuse only a code that reached a provider; wait for one whose send is under way;
                -- a code whose send failed (every provider, for now) is sent afresh below.
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
                FOR i IN 1 .. coalesce(array_length(p_scopes, 1), 0) LOOP
                    CONTINUE WHEN p_scopes[i] = 'resend' AND NOT (have_code AND p_force);
                    win := to_timestamp(floor(extract(epoch FROM now()) / p_windows[i]) * p_windows[i]);
                    counter_key := p_keys[i];
                    IF p_scopes[i] = 'global' THEN
                        -- Sharded, so the global counter is not one row every worker waits on.
                        counter_key := 'shard-' || floor(random() * 16)::int;
                    END IF;
                    INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
                    VALUES (p_scopes[i], counter_key, win, 1, win + make_interval(secs => p_windows[i]))
                    ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count + 1
                    RETURNING r.count INTO n;
                    undo_scopes := undo_scopes || p_scopes[i];
                    undo_keys := undo_keys || counter_key;
                    undo_wins := undo_wins || win;
                    IF p_scopes[i] = 'global' THEN
                        SELECT sum(count) INTO n FROM herald.sms_rate_counters WHERE scope = 'global' AND window_start = win;
                    END IF;
                    IF n > p_maxes[i] THEN
                        refused := p_scopes[i];
                        EXIT;
                    END IF;
                END LOOP;
                IF refused IS NOT NULL THEN
                    FOR i IN 1 .. coalesce(array_length(undo_scopes, 1), 0) LOOP
                        UPDATE herald.sms_rate_counters SET count = count - 1
                         WHERE scope = undo_scopes[i] AND key = undo_keys[i] AND window_start = undo_wins[i];
                    END LOOP;
                    INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, reason)
                    VALUES (p_verification_id, NULL, p_phone, p_purpose, p_message_id, 'refused', 'rate_limited:' || refused);
                    RETURN QUERY SELECT 'refused'::text, 'rate_limited:' || refused, false;
                    RETURN;
                END IF;
            END IF;

            IF have_code THEN
                UPDATE herald.sms_codes
                   SET key_id = p_key_id, code_hash = p_code_hash, attempts = 0, max_attempts = p_max_attempts,
                       test_number = p_test, expires_at = now() + make_interval(secs => p_ttl_seconds),
                       last_sent_at = now(), sends = sends + 1
                 WHERE id = cur.id;
                code_row := cur.id;
                new_sends := cur.sends + 1;
            ELSE
                new_sends := 1;
                INSERT INTO herald.sms_codes (phone_number, purpose, status, key_id, code_hash, max_attempts, test_number, expires_at, last_sent_at, sends)
                VALUES (p_phone, p_purpose, 'pending', p_key_id, p_code_hash, p_max_attempts, p_test,
                        now() + make_interval(secs => p_ttl_seconds), now(), 1)
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
        """), exhaustedAndBound, abuseControls]

    /// Migration 8: a verification id is bound to its number and purpose (`herald.sms_prepare`
    /// decides `invalid` for a reuse), and `herald.sms_exhausted` ends a verification whose job
    /// ran out of attempts. (Versions 3 to 7 are the runtime's, email's and push's.)
    static let exhaustedAndBound = Migration(version: 8, name: "sms_exhausted_and_bound_ids", sql: """
        -- As in migration 2, with one more decision:
        --   invalid  the verification id is another number's or purpose's (o_reason names the field)
        CREATE OR REPLACE FUNCTION herald.sms_prepare(
            p_verification_id text, p_message_id text, p_phone text, p_purpose text,
            p_force boolean, p_test boolean, p_key_id text, p_code_hash bytea,
            p_ttl_seconds integer, p_max_attempts integer, p_resend_interval_seconds integer,
            p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_owner_key bigint
        ) RETURNS TABLE (o_decision text, o_reason text, o_uncertain boolean)
        LANGUAGE plpgsql AS $$
        DECLARE
            ver herald.sms_verifications%ROWTYPE;
            cur herald.sms_codes%ROWTYPE;
            have_code boolean;
            code_row bigint;
            n bigint;
            win timestamptz;
            counter_key text;
            refused text;
            undo_scopes text[] := '{}';
            undo_keys text[] := '{}';
            undo_wins timestamptz[] := '{}';
            n_sent bigint;
            n_sending bigint;
            new_sends integer;
        BEGIN
            SELECT * INTO ver FROM herald.sms_verifications WHERE verification_id = p_verification_id FOR UPDATE;
            IF FOUND THEN
                -- The id names another number's or purpose's verification: never sent to this one.
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
                -- Another job of this verification is calling a provider right now.
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
                    -- Another request sent the code again since: that SMS answers this verification.
                    UPDATE herald.sms_verifications SET state = 'reused', updated_at = now()
                     WHERE verification_id = p_verification_id;
                    RETURN QUERY SELECT 'reused'::text, NULL::text, false;
                    RETURN;
                END IF;
                -- A retry, or a redelivery after a crash: a fresh code replaces the one nobody may have received.
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

            SELECT * INTO cur FROM herald.sms_codes
             WHERE phone_number = p_phone AND purpose = p_purpose AND status = 'pending' FOR UPDATE;
            have_code := FOUND;
            IF have_code AND cur.expires_at <= now() THEN
                UPDATE herald.sms_codes SET status = 'expired', finished_at = now() WHERE id = cur.id;
                have_code := false;
            END IF;

            IF NOT p_test AND have_code AND NOT p_force AND NOT cur.test_number
               AND cur.last_sent_at > now() - make_interval(secs => p_resend_interval_seconds) THEN
                -- Reuse only a code that reached a provider; wait for one whose send is under way;
                -- a code whose send failed (every provider, for now) is sent afresh below.
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
                FOR i IN 1 .. coalesce(array_length(p_scopes, 1), 0) LOOP
                    CONTINUE WHEN p_scopes[i] = 'resend' AND NOT (have_code AND p_force);
                    win := to_timestamp(floor(extract(epoch FROM now()) / p_windows[i]) * p_windows[i]);
                    counter_key := p_keys[i];
                    IF p_scopes[i] = 'global' THEN
                        -- Sharded, so the global counter is not one row every worker waits on.
                        counter_key := 'shard-' || floor(random() * 16)::int;
                    END IF;
                    INSERT INTO herald.sms_rate_counters AS r (scope, key, window_start, count, expires_at)
                    VALUES (p_scopes[i], counter_key, win, 1, win + make_interval(secs => p_windows[i]))
                    ON CONFLICT (scope, key, window_start) DO UPDATE SET count = r.count + 1
                    RETURNING r.count INTO n;
                    undo_scopes := undo_scopes || p_scopes[i];
                    undo_keys := undo_keys || counter_key;
                    undo_wins := undo_wins || win;
                    IF p_scopes[i] = 'global' THEN
                        SELECT sum(count) INTO n FROM herald.sms_rate_counters WHERE scope = 'global' AND window_start = win;
                    END IF;
                    IF n > p_maxes[i] THEN
                        refused := p_scopes[i];
                        EXIT;
                    END IF;
                END LOOP;
                IF refused IS NOT NULL THEN
                    FOR i IN 1 .. coalesce(array_length(undo_scopes, 1), 0) LOOP
                        UPDATE herald.sms_rate_counters SET count = count - 1
                         WHERE scope = undo_scopes[i] AND key = undo_keys[i] AND window_start = undo_wins[i];
                    END LOOP;
                    INSERT INTO herald.sms_verifications (verification_id, code_id, phone_number, purpose, message_id, state, reason)
                    VALUES (p_verification_id, NULL, p_phone, p_purpose, p_message_id, 'refused', 'rate_limited:' || refused);
                    RETURN QUERY SELECT 'refused'::text, 'rate_limited:' || refused, false;
                    RETURN;
                END IF;
            END IF;

            IF have_code THEN
                UPDATE herald.sms_codes
                   SET key_id = p_key_id, code_hash = p_code_hash, attempts = 0, max_attempts = p_max_attempts,
                       test_number = p_test, expires_at = now() + make_interval(secs => p_ttl_seconds),
                       last_sent_at = now(), sends = sends + 1
                 WHERE id = cur.id;
                code_row := cur.id;
                new_sends := cur.sends + 1;
            ELSE
                new_sends := 1;
                INSERT INTO herald.sms_codes (phone_number, purpose, status, key_id, code_hash, max_attempts, test_number, expires_at, last_sent_at, sends)
                VALUES (p_phone, p_purpose, 'pending', p_key_id, p_code_hash, p_max_attempts, p_test,
                        now() + make_interval(secs => p_ttl_seconds), now(), 1)
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

        -- A job dead-lettered after runner.max_attempts: its verification ends `failed` with the
        -- reason, and its code `failed` unless a later send of the code (another verification's)
        -- superseded this one's. A verification without a row yet gets one, `failed`. False when
        -- there is nothing of this job to end: the verification was decided meanwhile, names
        -- another number or purpose, or a live worker is sending it now.
        CREATE FUNCTION herald.sms_exhausted(
            p_verification_id text, p_message_id text, p_phone text, p_purpose text, p_reason text
        ) RETURNS boolean
        LANGUAGE plpgsql AS $$
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
        """)
}
