import HeraldRuntime

/// The schema of HeraldApple.
public enum AppleSchema {
    /// Migration 19: the refresh tokens (encrypted), the record of every `apple.token` and
    /// `apple.revoke` job (written before Apple is called, so a redelivery never exchanges a
    /// code twice), Apple's calls, `herald.apple_prepare`, which decides a job in one round
    /// trip, `herald.apple_exhausted`, and the trigger that enqueues the revocation of every
    /// token of a deleted account in the deleting transaction.
    public static let migrations = [
        Migration(version: 19, name: "apple_tokens", sql: """
        -- One refresh token per account and client id, AES-256-GCM under apple.token_keys'
        -- key key_id (the record's account and client id are the associated data). No foreign key
        -- to herald.accounts: a deleted account's token stays until its revocation deletes it.
        CREATE TABLE herald.apple_tokens (
            account_id     text NOT NULL,
            client_id      text NOT NULL,
            key_id         text NOT NULL,
            nonce          bytea NOT NULL CHECK (octet_length(nonce) = 12),
            ciphertext     bytea NOT NULL,
            tag            bytea NOT NULL CHECK (octet_length(tag) = 16),
            -- The jobs exchange a revocation of this token is enqueued on (the storing worker's).
            jobs_exchange  text NOT NULL,
            -- The job that stored it.
            message_id     text NOT NULL,
            created_at     timestamptz NOT NULL DEFAULT now(),
            updated_at     timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (account_id, client_id)
        );

        -- One row per apple.token / apple.revoke job (its message_id), written before Apple is
        -- called. step: what the call in flight does (exchange: a single-use code, never sent
        -- twice; revoke: a token, which Apple revokes again harmlessly).
        CREATE TABLE herald.apple_jobs (
            message_id       text PRIMARY KEY,
            operation        text NOT NULL CHECK (operation IN ('token','revoke')),
            account_id       text NOT NULL,
            client_id        text NOT NULL,
            -- hex SHA-256 of the authorization code, never the code: one exchange per code.
            code_hash        text UNIQUE,
            state            text NOT NULL CHECK (state IN ('calling','retrying','stored','revoked','nothing','failed','uncertain')),
            step             text CHECK (step IN ('exchange','revoke')),
            -- The presence key of the worker that set `calling` (its advisory lock is held while it lives).
            owner_key        bigint,
            calls            integer NOT NULL DEFAULT 0,
            uncertain_calls  integer NOT NULL DEFAULT 0,
            http_status      integer,
            -- Apple's error (invalid_grant, invalid_client, ...) or Herald's check that failed.
            error            text,
            reason           text,
            created_at       timestamptz NOT NULL DEFAULT now(),
            updated_at       timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX apple_jobs_account_idx ON herald.apple_jobs (account_id);
        CREATE INDEX apple_jobs_updated_idx ON herald.apple_jobs (updated_at);

        \(AppleStore.attempts.createSQL)

        -- Decides an apple job atomically (one round trip), before Apple is called:
        --   call       the caller makes the call of p_step; o_uncertain: an earlier call of this
        --              job (a revocation) may have reached Apple unanswered
        --   uncertain  an earlier try sent the code to Apple and stopped before recording the
        --              answer: not sent again (codes are single use); the job ends `uncertain`
        --   refused    o_reason authorization_code_reused: another job exchanged this code
        --   nothing    nothing to revoke (p_step NULL): the job ends `nothing`
        --   done       decided before (o_reason: its state)
        --   busy       a live worker runs it now
        --   invalid    the message_id is another job's (o_reason names the field)
        CREATE FUNCTION herald.apple_prepare(
            p_message_id text, p_operation text, p_account_id text, p_client_id text,
            p_code_hash text, p_step text, p_owner_key bigint
        ) RETURNS TABLE (o_decision text, o_reason text, o_uncertain boolean)
        LANGUAGE plpgsql AS $$
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

        -- A job dead-lettered after runner.max_attempts: it ends `failed` with the reason. False
        -- when there is nothing of this job to end (decided meanwhile, another job's message_id,
        -- or a live worker runs it now).
        CREATE FUNCTION herald.apple_exhausted(
            p_message_id text, p_operation text, p_account_id text, p_client_id text, p_reason text
        ) RETURNS boolean
        LANGUAGE plpgsql AS $$
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

        -- Deleting an account enqueues apple.revoke for each token it holds, in the deleting
        -- transaction, whoever deletes it (HeraldAccounts.deleteAccount, a front API's SQL, a
        -- notification): an outbox row for the jobs exchange, relayed like every job Herald
        -- enqueues itself. The token stays until the revocation deletes it.
        CREATE FUNCTION herald.apple_revoke_deleted_accounts() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO herald.event_outbox (exchange, name, message_id, body)
            SELECT t.jobs_exchange, 'apple.revoke', gen_random_uuid()::text,
                   json_build_object('version', 1, 'account_id', t.account_id, 'client_id', t.client_id)::text
              FROM deleted d JOIN herald.apple_tokens t ON t.account_id = d.id;
            RETURN NULL;
        END
        $$;
        CREATE TRIGGER accounts_apple_revoke AFTER DELETE ON herald.accounts
            REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION herald.apple_revoke_deleted_accounts();
        """),
        notifications,
    ]
}
