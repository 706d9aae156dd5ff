-- name: DevOutboxRecord
-- What the dev provider would have sent (its recipient masked, its body JSON without a
-- secret), once per message.
-- param kind: text
-- param messageID: text
-- param jobType: text
-- param recipient: text
-- param body: text
INSERT INTO herald.dev_outbox (kind, message_id, job_type, recipient, body)
VALUES ($1::text, $2::text, $3::text, $4::text, $5::text::jsonb)
ON CONFLICT (message_id) DO NOTHING;
