-- name: RequestPrepare
-- Decides an email action job (functions/email_prepare.sql says how): records the request (or
-- finds it), supersedes an earlier try's pending code and stores the new one. `state` is the
-- state to record at once (`sending`, or `no_account` when nothing is sent); the code's columns
-- are NULL when there is no code. The send limits are counted when the request is new.
-- param requestID: text
-- param messageID: text
-- param email: text
-- param mode: text
-- param state: text
-- param ownerKey: bigint
-- param keyID: text?
-- param codeHash: bytea?
-- param settings: text?
-- param expiresSeconds: integer
-- param pairedEmail: text?
-- param recoveryJob: text?
-- param recoveryExchange: text?
-- param scopes: text[]
-- param keys: text[]
-- param windows: integer[]
-- param maxes: integer[]
-- column decision: text
-- column state: text? as EmailRequestState
-- column uncertain: boolean
-- column reason: text?
SELECT o_decision, o_state, o_uncertain, o_reason FROM herald.email_prepare(
    $1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint,
    $7::text, $8::bytea, $9::text::jsonb, $10::int,
    $11::text, $12::text, $13::text,
    $14::text[], $15::text[], $16::int[], $17::int[]);
