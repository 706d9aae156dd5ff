-- name: DevOutboxRecent
-- The dev outbox's latest entries, newest first.
-- param limit: bigint
-- column kind: text
-- column messageID: text
-- column jobType: text
-- column recipient: text
-- column body: text
SELECT kind, message_id, job_type, recipient, body::text FROM herald.dev_outbox ORDER BY id DESC LIMIT $1::bigint;
