-- name: JobMarkRetrying
-- A job goes to a delay queue with its reason: no worker holds it, any may claim it when it
-- comes back.
-- param messageID: text
-- param reason: text
UPDATE herald.job_runs SET status = 'retrying', reason = $2::text, owner_key = NULL,
       lease_until = NULL, updated_at = now()
 WHERE message_id = $1::text;
