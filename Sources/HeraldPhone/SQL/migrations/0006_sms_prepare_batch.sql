-- herald:legacy-version 23
-- A claim group's SMS jobs decided in one call (sms_prepare_batch); generic plans for the SMS functions.

-- herald.sms_batch_limits was created here: now functions/sms_batch_limits.sql.
-- herald.sms_prepare_batch was created here: now functions/sms_prepare_batch.sql.
-- Generic plans (plan_cache_mode = force_generic_plan) for sms_prepare_batch, sms_prepare,
-- sms_rate_take, sms_exhausted, sms_guess_failed, fraud_guard_check, fraud_guard_count,
-- fraud_guard_sent, fraud_guard_verified: now the SET clause of each one's functions/<name>.sql.
