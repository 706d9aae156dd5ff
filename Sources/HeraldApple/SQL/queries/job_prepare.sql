-- name: JobPrepare
-- Decides an Apple job (functions/apple_prepare.sql says how): records the job (or finds it) and
-- the call about to be made (`step`, NULL for none: nothing to revoke), or says why no call is made.
-- param messageID: text
-- param operation: text
-- param accountID: text
-- param clientID: text
-- param codeHash: text?
-- param step: text?
-- param ownerKey: bigint
-- column decision: text
-- column reason: text?
-- column uncertain: boolean
SELECT o_decision, o_reason, o_uncertain FROM herald.apple_prepare(
    $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint);
