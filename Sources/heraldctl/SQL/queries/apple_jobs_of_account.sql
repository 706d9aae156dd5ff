-- name: AppleJobsOfAccount
-- An account's Sign in with Apple jobs, oldest first; a missing step, error or reason reads '',
-- a missing HTTP status 0.
-- param accountID: text
-- column messageID: text
-- column operation: text
-- column clientID: text
-- column state: text
-- column step: text
-- column calls: integer
-- column uncertainCalls: integer
-- column httpStatus: integer
-- column error: text
-- column reason: text
-- column updatedAt: text
SELECT message_id, operation, client_id, state, coalesce(step, ''), calls, uncertain_calls, coalesce(http_status, 0),
       coalesce(error, ''), coalesce(reason, ''), to_char(updated_at, 'YYYY-MM-DD"T"HH24:MI:SSOF')
  FROM herald.apple_jobs WHERE account_id = $1::text ORDER BY created_at;
