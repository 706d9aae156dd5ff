-- name: LinkCodesFind
-- The link codes whose hash is one of `digests` (the code hashed under every key of the ring,
-- each in lower-case hex), locked while the one that matches is judged and used.
-- param digests: text[]
-- column id: bigint
-- column status: text
-- column expired: boolean
-- column email: text
-- column mode: text
-- column settings: text
-- column keyID: text
-- column codeHash: bytea
SELECT id, status, expires_at <= now(), email, mode, settings::text, key_id, code_hash
  FROM herald.email_codes WHERE code_hash = ANY(ARRAY(SELECT decode(d, 'hex') FROM unnest($1::text[]) AS d))
   FOR UPDATE;
