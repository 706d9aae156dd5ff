-- name: RelayAddressUndeliverable
-- Whether the newest marking of an Apple private relay address (found by its keyed hashes,
-- one per key of the ring) says Apple does not forward to it. No row when it was never marked.
-- param hashes: bytea[]
-- column undeliverable: boolean
SELECT NOT deliverable FROM herald.apple_relay_addresses
 WHERE address_hash = ANY ($1::bytea[])
 ORDER BY event_time DESC LIMIT 1;
