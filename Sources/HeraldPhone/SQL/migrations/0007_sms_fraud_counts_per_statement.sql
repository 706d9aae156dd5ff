-- herald:legacy-version 27
-- The fraud guard counts a statement's sends at once: a statement trigger instead of a row trigger.

-- herald.fraud_guard_sent and its trigger sms_verifications_fraud_guard_sent were dropped and
-- created again here (a statement trigger): now functions/fraud_guard_sent.sql.
-- Generic plans (plan_cache_mode = force_generic_plan) for fraud_guard_sent: now the SET clause
-- in functions/fraud_guard_sent.sql.
