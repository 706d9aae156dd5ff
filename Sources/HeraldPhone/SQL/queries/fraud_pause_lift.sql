-- name: FraudPauseLift
-- Lifts a pause, recording who (functions/fraud_guard_lift.sql); the scope is not paused again
-- for `graceSeconds`. False: it was not paused.
-- param scope: text
-- param key: text
-- param by: text
-- param graceSeconds: integer
-- column lifted: boolean
SELECT herald.fraud_guard_lift($1::text, $2::text, $3::text, $4::int);
