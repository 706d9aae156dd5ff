-- name: JobsReopen
-- Jobs replayed from the dead-letter queue run again, with fresh attempts.
-- param messageIDs: text[]
UPDATE herald.job_runs SET status = 'retrying', attempts = 0, reason = NULL, finished_at = NULL,
       owner_key = NULL, lease_until = NULL, updated_at = now()
 WHERE message_id = ANY ($1::text[]) AND status IN ('dead', 'rejected');
