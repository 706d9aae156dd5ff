-- A job dead-lettered after runner.max_attempts: it ends `failed` with the reason. False
-- when there is nothing of this job to end (decided meanwhile, another job's message_id,
-- or a live worker runs it now).
CREATE OR REPLACE FUNCTION herald.apple_exhausted(p_message_id text, p_operation text, p_account_id text, p_client_id text, p_reason text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
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
$function$;
