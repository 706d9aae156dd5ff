-- name: JobExhausted
-- The job ran out of attempts (functions/apple_exhausted.sql): `failed` with `reason`; false when
-- there was nothing of this job to end.
-- param messageID: text
-- param operation: text
-- param accountID: text
-- param clientID: text
-- param reason: text
-- column ended: boolean
SELECT herald.apple_exhausted($1::text, $2::text, $3::text, $4::text, $5::text);
