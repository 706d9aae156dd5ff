-- herald:legacy-version 28
-- sms_prepare_batch judges each counter once (its counter CTE materialized).

-- herald.sms_prepare_batch was redefined here: now functions/sms_prepare_batch.sql.
-- Generic plans (plan_cache_mode = force_generic_plan) for sms_prepare_batch: now the SET clause
-- in functions/sms_prepare_batch.sql.
