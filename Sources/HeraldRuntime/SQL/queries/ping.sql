-- name: Ping
-- Whether the database answers (readiness, the presence session's keep-alive).
-- column one: integer
SELECT 1;
