-- Fallback between channels (issue 35, docs/fallback.md): one verification, one code, tried on
-- its channels in turn (sms, whatsapp, voice). The next channel goes out when one's providers
-- refuse or are down (in the same job), when a receipt says undelivered, or when no `delivered`
-- came within the channel's sms.fallback.after_seconds (a `sms.fallback` job through a wait queue).
--
-- herald.sms_fallbacks: a verification whose further channels may still be tried. The same code
-- goes out on each, so it is kept sealed (AES-256-GCM under a key derived from the key ring by
-- HKDF, the verification id as associated data: SecretSealer), never in clear; the row, and the
-- sealed code with it, is deleted when the last channel is sent, when the code is used, expired or
-- superseded, or when the verification's own code was delivered (functions/sms_fallback_take.sql).
-- squawk-ignore-file require-lock-timeout, require-statement-timeout, prefer-bigint-over-int
-- why: require-lock-timeout, require-statement-timeout: a new table, and a nullable column without a
--   default on sms_verifications (catalog only: no rewrite, no scan).
-- why: prefer-bigint-over-int: a step is an index into a list of at most three channels, and
--   code_sends copies sms_codes.sends (integer).
CREATE TABLE herald.sms_fallbacks (
    verification_id  text PRIMARY KEY REFERENCES herald.sms_verifications (verification_id) ON DELETE CASCADE,
    -- The channels in order, and the index (0-based) of the one whose send is out.
    channels         text[] NOT NULL CHECK (cardinality(channels) BETWEEN 2 AND 3),
    step             integer NOT NULL CHECK (step >= 0),
    -- The sms.verification job (its JSON, without a secret): what the next channel's send needs.
    job              jsonb NOT NULL,
    -- The code, sealed.
    key_id           text NOT NULL,
    nonce            bytea NOT NULL,
    ciphertext       bytea NOT NULL,
    tag              bytea NOT NULL,
    -- When the step's wait ends: a `timeout` job that comes earlier (relayed by a previous
    -- version's relay, which knows no wait queue) is held until then.
    due_at           timestamptz,
    -- waiting (for the step's wait, a receipt or nothing), or a `sms.fallback` job (message_id)
    -- sending the next step (`sending`, by the worker whose presence key is owner_key) or
    -- waiting to try again (`retrying`). The verification itself stays `sent` all along: its
    -- earlier send stands, the fraud guard counts it once, and a new request for the number
    -- reuses its code as it would any code just sent.
    state            text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'sending', 'retrying')),
    message_id       text,
    owner_key        bigint,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- The channel of the verification's last send (NULL: sms, as every send before this version).
ALTER TABLE herald.sms_verifications ADD COLUMN channel text;
