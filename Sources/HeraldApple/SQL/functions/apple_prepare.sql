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
CREATE OR REPLACE FUNCTION herald.apple_prepare(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_code_hash text, p_step text, p_owner_key bigint)
 RETURNS TABLE(o_decision text, o_reason text, o_uncertain boolean)
 LANGUAGE plpgsql
AS $function$
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
$function$;
