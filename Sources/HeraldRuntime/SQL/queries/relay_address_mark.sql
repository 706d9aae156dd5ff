-- name: RelayAddressMark
-- Records that Apple stopped or resumed forwarding to a relay address as of `eventTime`: a
-- marking older than the one stored changes nothing; one under an older key (`others`) is
-- replaced by one under the active key. A row when the stored state changed.
-- param others: bytea[]
-- param active: bytea
-- param eventTime: timestamp with time zone
-- param keyID: text
-- param deliverable: boolean
-- column changed: integer
WITH prior AS (
    SELECT max(event_time) AS t FROM herald.apple_relay_addresses
     WHERE address_hash = ANY ($1::bytea[]) OR address_hash = $2::bytea
), newer AS (
    SELECT (SELECT t FROM prior) IS NULL OR (SELECT t FROM prior) <= $3::timestamptz AS ok
), rekeyed AS (
    DELETE FROM herald.apple_relay_addresses
     WHERE address_hash = ANY ($1::bytea[]) AND (SELECT ok FROM newer)
)
INSERT INTO herald.apple_relay_addresses (address_hash, key_id, deliverable, event_time)
SELECT $2::bytea, $4::text, $5::boolean, $3::timestamptz WHERE (SELECT ok FROM newer)
ON CONFLICT (address_hash) DO UPDATE
   SET deliverable = EXCLUDED.deliverable, event_time = EXCLUDED.event_time, key_id = EXCLUDED.key_id, updated_at = now()
 WHERE herald.apple_relay_addresses.event_time <= EXCLUDED.event_time
RETURNING 1;
