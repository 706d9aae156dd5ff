-- (a) The Go peer's PostgreSQL work for one job, exactly as bench/peers/go/main.go issues it
-- through pgx (prepared, autocommit): one INSERT of a pending row, then (after the provider
-- call) one UPDATE to 'sent'. Two transactions; one run of this script = one job.
-- The uuid is made by the server (gen_random_uuid(): main.go makes a random v4 uuid client-side,
-- the same random spread over the primary key) and read back for the UPDATE; the HMAC (64 hex
-- characters) and the provider's id are constants of the same length as the real ones.
\set ph random(491700000000000, 491799999999999)
INSERT INTO peer_verifications (id, phone, code_hmac, status)
VALUES (gen_random_uuid(), :ph, '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 'pending') RETURNING id \gset
UPDATE peer_verifications SET status = 'sent', provider_id = 'SM0d4c5a6f3b2e1d0c9b8a7f6e5d4c3b2a' WHERE id = :id;
