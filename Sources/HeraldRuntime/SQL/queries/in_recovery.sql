-- name: InRecovery
-- Whether this server is a standby (the primary is the one that is not).
-- column inRecovery: boolean
SELECT pg_is_in_recovery();
