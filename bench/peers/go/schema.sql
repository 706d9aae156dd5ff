-- The Go peer's one table: a verification per job, its code's HMAC, 'pending' until the
-- provider accepted the SMS, then 'sent' with the provider's id. `peer-go prepare` runs this
-- file (embedded) before each run: every run starts on an empty table.
DROP TABLE IF EXISTS peer_verifications;
CREATE TABLE peer_verifications (id uuid PRIMARY KEY, phone text, code_hmac text, status text, provider_id text);
