-- name: FraudGuardJudge
-- herald.fraud_guard_check for each request, in order (the i-th row is the i-th request's): the
-- requests' verification ids, numbers, regions, prefixes, known-number hashes, whether each is
-- a later send of its verification and whether its app verification was accepted; then the
-- guard's configuration. A row without a scope passed.
-- param verificationIDs: text[]
-- param phones: text[]
-- param regions: text[]
-- param prefixes: text[]
-- param knownHashes: text[]
-- param again: boolean[]
-- param proven: boolean[]
-- param windowMinutes: integer
-- param regionFloor: integer
-- param prefixFloor: integer
-- param minConversion: double precision
-- param pauseSeconds: integer
-- param maxPauseSeconds: integer
-- param graceSeconds: integer
-- param maxUndelivered: double precision
-- param usualMultiple: double precision
-- column index: bigint
-- column scope: text?
-- column key: text?
-- column new: boolean?
-- column sent: bigint?
-- column verified: bigint?
-- column until: timestamp with time zone?
-- column seconds: integer?
-- column undelivered: bigint?
SELECT u.i, f.o_scope, f.o_key, f.o_new, f.o_sent, f.o_verified, f.o_until, f.o_seconds, f.o_undelivered
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::boolean[])
       WITH ORDINALITY AS u(id, phone, region, prefix, known, again, proven, i)
  LEFT JOIN LATERAL herald.fraud_guard_check(
       u.id, u.phone, u.region, u.prefix, $8::int, $9::int, $10::int, $11::float8, $12::int, $13::int, $14::int, u.known, $15::float8,
       u.again, u.proven, $16::float8) f ON true
 ORDER BY u.i;
