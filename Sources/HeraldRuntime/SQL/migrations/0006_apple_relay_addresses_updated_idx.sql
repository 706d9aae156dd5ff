-- An index on herald.apple_relay_addresses (updated_at), for cleanup's purge target of that name.
-- herald:no-transaction
-- The migrator runs this file's statements one by one outside a transaction, as CREATE INDEX
-- CONCURRENTLY needs: herald-email reads the table on every email and herald-apple writes it,
-- and a plain CREATE INDEX would hold their writes until it ends. If the build fails part way,
-- PostgreSQL leaves an INVALID index behind and no ledger row is written: the next migrate drops
-- it and builds it again.
-- squawk-ignore-file require-lock-timeout, require-statement-timeout, prefer-robust-stmts
-- why: require-lock-timeout, require-statement-timeout: CONCURRENTLY takes only a SHARE UPDATE
--   EXCLUSIVE lock, which lets reads and writes go on; a statement timeout would only make the
--   build of a large table fail and start again.
-- why: prefer-robust-stmts: the DROP ... IF EXISTS before it is what makes the file safe to run again.
DROP INDEX CONCURRENTLY IF EXISTS herald.apple_relay_addresses_updated_idx;
CREATE INDEX CONCURRENTLY apple_relay_addresses_updated_idx ON herald.apple_relay_addresses (updated_at);
