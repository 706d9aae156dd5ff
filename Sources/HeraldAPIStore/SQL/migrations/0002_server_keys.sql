-- Server keys (issue 45): a key its holder's server calls herald-api with, naming the end user's
-- IP address itself (`client_ip` on /v1 starts, `DeviceIp` on /v2). For such a key the peer's
-- own address is never counted in a per-IP limit: a front API's one server is not one user.
-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: a column with a constant default changes
--   the catalog only (no rewrite since PostgreSQL 11); a timeout would only make the migration
--   fail behind a long reader.
ALTER TABLE herald.api_keys ADD COLUMN asserts_client_ip boolean NOT NULL DEFAULT false;
