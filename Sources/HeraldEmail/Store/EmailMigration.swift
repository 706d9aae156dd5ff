import HeraldRuntime
/// The schema of HeraldEmail.
public enum EmailSchema {
    /// Migration 4: email action requests and their one-time link codes (only keyed hashes).
    public static let migrations = [
        Migration(version: 4, name: "email", sql: """
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
        CREATE INDEX account_providers_email_idx ON herald.account_providers (lower(provider_uid))
            WHERE provider IN ('password', 'emailLink');
        """),
        // Migration 6: the provider attempts of each request (the runtime's attempt log, as SMS
        // has had since migration 2), and the send decision as one SQL function like SMS and push
        // (herald.email_prepare), instead of a transaction of round trips from Swift.
        Migration(version: 6, name: "email_attempts_and_prepare", sql: """
        \(EmailStore.attempts.createSQL)

        -- Decides one email.action job: records the request (or finds it), supersedes an earlier
        -- try's pending code, and stores the new code (p_code_hash NULL: the no-account note or
        -- silence). o_decision:
        --   send  send now (o_uncertain: an earlier try's worker died mid-send)
        --   done  decided before (o_state: the request's state)
        --   busy  another live worker is sending this request
        CREATE FUNCTION herald.email_prepare(
            p_request_id text, p_message_id text, p_email text, p_mode text, p_state text, p_owner_key bigint,
            p_key_id text, p_code_hash bytea, p_settings jsonb, p_expires_seconds integer
        ) RETURNS TABLE (o_decision text, o_state text, o_uncertain boolean)
        LANGUAGE plpgsql AS $$
        DECLARE
            v_state text;
            v_owner_gone boolean;
            v_uncertain boolean := false;
        BEGIN
            INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, owner_key)
            VALUES (p_request_id, p_message_id, p_email, p_mode, p_state, p_owner_key)
            ON CONFLICT (request_id) DO NOTHING;
            IF NOT FOUND THEN
                -- No live sender: no owner, this very job again (the runner never runs a message id
                -- twice at once; a re-run after a database outage), or an owner whose presence lock
                -- is gone (the worker died).
                SELECT r.state,
                       r.owner_key IS NULL OR (r.owner_key = p_owner_key AND r.message_id = p_message_id)
                         OR pg_try_advisory_xact_lock_shared(r.owner_key)
                  INTO v_state, v_owner_gone
                  FROM herald.email_requests r WHERE r.request_id = p_request_id FOR UPDATE;
                IF v_state = 'sending' AND NOT v_owner_gone THEN
                    RETURN QUERY SELECT 'busy'::text, v_state, false;
                    RETURN;
                ELSIF v_state = 'sending' THEN
                    v_uncertain := true;
                ELSIF v_state <> 'retrying' THEN
                    RETURN QUERY SELECT 'done'::text, v_state, false;
                    RETURN;
                END IF;
                UPDATE herald.email_codes SET status = 'superseded' WHERE request_id = p_request_id AND status = 'pending';
                UPDATE herald.email_requests
                   SET state = p_state, owner_key = p_owner_key, message_id = p_message_id,
                       uncertain_sends = uncertain_sends + v_uncertain::int, updated_at = now()
                 WHERE request_id = p_request_id;
            END IF;
            IF p_code_hash IS NOT NULL THEN
                INSERT INTO herald.email_codes (request_id, email, mode, key_id, code_hash, settings, status, expires_at)
                VALUES (p_request_id, p_email, p_mode, p_key_id, p_code_hash, p_settings, 'pending',
                        now() + make_interval(secs => p_expires_seconds));
            END IF;
            RETURN QUERY SELECT 'send'::text, p_state, v_uncertain;
        END
        $$;
        """),
        // Migration 10 (issue 17): a used link supersedes every other pending link of its
        // (address, mode), and a new reset_password request the older ones (OWASP Forgot
        // Password); a request_id reused with another address or mode is refused; a used
        // verify_and_change_email link enqueues the recover_email notice to the old address in
        // the consume's transaction (herald.email_use_code), through the outbox on the jobs exchange.
        Migration(version: 10, name: "email_supersede_and_recovery", sql: """
        ALTER TABLE herald.email_requests
            -- verify_and_change_email: the old address (the recovery notice goes there);
            -- recover_email: the address it had been changed to. Personal data, purged with the row.
            ADD COLUMN paired_email text,
            -- verify_and_change_email: the recover_email job (its JSON body) and the exchange to
            -- publish it on, enqueued when the link is used.
            ADD COLUMN recovery_job text,
            ADD COLUMN recovery_exchange text;
        -- queued: enqueued by Herald (a recovery notice), not tried yet.
        ALTER TABLE herald.email_requests DROP CONSTRAINT email_requests_state_check;
        ALTER TABLE herald.email_requests ADD CONSTRAINT email_requests_state_check
            CHECK (state IN ('queued','sending','retrying','sent','no_account','noted','failed'));
        CREATE INDEX email_codes_pending_idx ON herald.email_codes (email, mode) WHERE status = 'pending';

        DROP FUNCTION herald.email_prepare(text, text, text, text, text, bigint, text, bytea, jsonb, integer);

        -- Decides one email.action job: records the request (or finds it), supersedes an earlier
        -- try's pending code (and, for reset_password, every pending reset code of the address),
        -- and stores the new code (p_code_hash NULL: the no-account note or silence). o_decision:
        --   send     send now (o_uncertain: an earlier try's worker died mid-send)
        --   done     decided before (o_state: the request's state)
        --   busy     another live worker is sending this request
        --   invalid  o_reason: the request_id was used with another email, mode or old_email, or
        --            a recover_email job Herald did not enqueue
        CREATE FUNCTION herald.email_prepare(
            p_request_id text, p_message_id text, p_email text, p_mode text, p_state text, p_owner_key bigint,
            p_key_id text, p_code_hash bytea, p_settings jsonb, p_expires_seconds integer,
            p_paired_email text, p_recovery_job text, p_recovery_exchange text
        ) RETURNS TABLE (o_decision text, o_state text, o_uncertain boolean, o_reason text)
        LANGUAGE plpgsql AS $$
        DECLARE
            v_row herald.email_requests;
            v_owner_gone boolean;
            v_uncertain boolean := false;
        BEGIN
            INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, owner_key,
                                               paired_email, recovery_job, recovery_exchange)
            SELECT p_request_id, p_message_id, p_email, p_mode, p_state, p_owner_key,
                   p_paired_email, p_recovery_job, p_recovery_exchange
             WHERE p_mode <> 'recover_email'
            ON CONFLICT (request_id) DO NOTHING;
            IF NOT FOUND THEN
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
                -- No live sender: no owner, this very job again (the runner never runs a message id
                -- twice at once; a re-run after a database outage), or an owner whose presence lock
                -- is gone (the worker died).
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

        -- Uses a pending code the consume API has judged live (its row locked by the caller):
        -- marks it used, supersedes every other pending code of its (address, mode), and for
        -- verify_and_change_email records the recover_email request to the old address
        -- (queued) and puts its job in the outbox, in the caller's transaction. Returns the
        -- request's paired address (the old address; for recover_email the one it replaced).
        CREATE FUNCTION herald.email_use_code(p_id bigint) RETURNS text
        LANGUAGE plpgsql AS $$
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
        """),
        sendLimits,
        genericPlans,
    ]
}
