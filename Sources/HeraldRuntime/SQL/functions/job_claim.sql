-- Claims a group of messages in the job ledger (JobLedger.claim): a new message gets its row,
-- running; a message waiting for a retry, or one whose claimant is gone (its lease ended, or its
-- worker's presence lock is free), is claimed again. Answers one row per input message: the
-- attempt count when claimed (NULL when not), and the row as it was before (NULL when new).
--
-- The ledger is partitioned by day (migrations/0007_daily_partitions.sql), and a unique index
-- there can only hold within a day: an id claimed yesterday must be found in yesterday's
-- partition, and two claims of a new id on either side of midnight would each insert into their
-- own day. So each claim first takes a transaction advisory lock per id (two-int key space
-- 19026: the presence locks are single bigint keys, another space), in hash order so two groups
-- never wait on each other in a cycle, and looks for the ids in every partition only then, in a
-- new statement whose snapshot sees the row of any claim that held the lock before it. When
-- none is found (a group of new messages, the usual case) it only inserts: an UPDATE over the
-- partitioned table would set up a scan of every day, the claim's largest cost at 16 days.
CREATE OR REPLACE FUNCTION herald.job_claim(p_ids text[], p_types text[], p_tokens text[], p_queue text,
                                            p_owner_key bigint, p_lease_seconds integer)
 RETURNS TABLE (message_id text, attempts integer, previous_status text, previous_token text)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
DECLARE
    v_ids text[];
    v_created timestamptz[];
    v_status text[];
    v_token text[];
BEGIN
    PERFORM pg_advisory_xact_lock(19026, h)
       FROM (SELECT DISTINCT hashtext(i) AS h FROM unnest(p_ids) AS i) AS ids
      ORDER BY h;

    -- Each id's row, in whichever day holds it: an index probe per day.
    SELECT coalesce(array_agg(o.message_id), '{}'), coalesce(array_agg(o.created_at), '{}'),
           coalesce(array_agg(o.status), '{}'), coalesce(array_agg(o.claim_token), '{}')
      INTO v_ids, v_created, v_status, v_token
      FROM herald.job_runs o WHERE o.message_id = ANY (p_ids);

    IF cardinality(v_ids) = 0 THEN
        -- Every id new (the usual case): one INSERT into today's day, no UPDATE over every day.
        RETURN QUERY
        INSERT INTO herald.job_runs AS j (message_id, job_type, queue, status, attempts, owner_key, claim_token, lease_until)
        SELECT i.message_id, i.job_type, p_queue, 'running', 1, p_owner_key, i.token, now() + make_interval(secs => p_lease_seconds)
          FROM unnest(p_ids, p_types, p_tokens) AS i(message_id, job_type, token)
         ORDER BY i.message_id
        RETURNING j.message_id, j.attempts, NULL::text, NULL::text;
        RETURN;
    END IF;

    RETURN QUERY
    WITH input AS (
        SELECT * FROM unnest(p_ids, p_types, p_tokens) AS i(message_id, job_type, token)
    ), before AS (
        SELECT * FROM unnest(v_ids, v_created, v_status, v_token) AS b(message_id, created_at, status, claim_token)
    ), taken AS (
        UPDATE herald.job_runs AS j
           SET status = 'running', attempts = j.attempts + (j.claim_token IS DISTINCT FROM input.token)::int,
               owner_key = p_owner_key, claim_token = input.token,
               lease_until = now() + make_interval(secs => p_lease_seconds), updated_at = now()
          FROM before JOIN input ON input.message_id = before.message_id
         WHERE j.message_id = before.message_id AND j.created_at = before.created_at
           AND (j.status = 'retrying'
                OR (j.status = 'running'
                    AND (j.claim_token = input.token
                         OR j.lease_until < now() OR j.owner_key IS NULL
                         OR pg_try_advisory_xact_lock_shared(j.owner_key))))
        RETURNING j.message_id, j.attempts
    ), inserted AS (
        INSERT INTO herald.job_runs (message_id, job_type, queue, status, attempts, owner_key, claim_token, lease_until)
        SELECT input.message_id, input.job_type, p_queue, 'running', 1, p_owner_key, input.token,
               now() + make_interval(secs => p_lease_seconds)
          FROM input
         WHERE NOT EXISTS (SELECT 1 FROM before WHERE before.message_id = input.message_id)
         ORDER BY input.message_id
        RETURNING job_runs.message_id, job_runs.attempts
    ), claimed AS (
        SELECT * FROM taken UNION ALL SELECT * FROM inserted
    )
    SELECT input.message_id, claimed.attempts, before.status, before.claim_token
      FROM input LEFT JOIN claimed ON claimed.message_id = input.message_id
                 LEFT JOIN before ON before.message_id = input.message_id;
END
$function$;
