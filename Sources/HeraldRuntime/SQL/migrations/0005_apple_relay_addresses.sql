-- herald:legacy-version 21
-- The private relay addresses Apple stopped or resumed forwarding to (herald-apple marks, herald-email reads).

-- One row per private relay address Apple told us about (email-disabled / email-enabled).
-- Only the address's keyed hash (HMAC-SHA256 under key_id, context apple_relay): addresses
-- are personal data, and the email worker, which has the address, looks it up by hash.
-- event_time is the notification's, so an older notification never overwrites a newer one.
CREATE TABLE herald.apple_relay_addresses (
    address_hash  bytea PRIMARY KEY,
    key_id        text NOT NULL,
    deliverable   boolean NOT NULL,
    event_time    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
