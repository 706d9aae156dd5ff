-- name: JobClaim
-- Claims a group of messages for this worker (functions/job_claim.sql): their ids, job types
-- and claim tokens, the queue, the worker's owner key and the lease. Each row is a message as
-- it was before this claim: `attempts` when this worker now holds it.
-- param messageIDs: text[]
-- param jobTypes: text[]
-- param tokens: text[]
-- param queue: text
-- param ownerKey: bigint
-- param leaseSeconds: integer
-- column messageID: text
-- column attempts: integer?
-- column previousStatus: text? as JobStatus
-- column previousToken: text?
SELECT message_id, attempts, previous_status, previous_token
  FROM herald.job_claim($1::text[], $2::text[], $3::text[], $4::text, $5::bigint, $6::int);
