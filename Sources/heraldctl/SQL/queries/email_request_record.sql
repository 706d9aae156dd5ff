-- name: EmailRequestRecord
-- An email request as `heraldctl verify email` shows it; `recoveryRequestID`: the
-- recover_email request a change enqueues when its link is used.
-- param requestID: text
-- column state: text
-- column reason: text?
-- column email: text
-- column mode: text
-- column provider: text?
-- column providerMessageID: text?
-- column uncertainSends: integer
-- column createdAt: text
-- column updatedAt: text
-- column pairedEmail: text?
-- column recoveryRequestID: text?
SELECT state, reason, email, mode, provider, provider_message_id, uncertain_sends,
       to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'), to_char(updated_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'),
       paired_email, recovery_job::jsonb ->> 'request_id'
  FROM herald.email_requests WHERE request_id = $1::text;
