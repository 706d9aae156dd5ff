-- herald:legacy-version 29
-- sms_prepare_batch locks every counter it may take in one key order; one global shard per transaction.

-- herald.sms_rate_take was redefined here: now functions/sms_rate_take.sql.
-- herald.sms_prepare_batch was redefined here: now functions/sms_prepare_batch.sql.
-- Generic plans (plan_cache_mode = force_generic_plan) for sms_rate_take, sms_prepare_batch: now
-- the SET clause of each one's functions/<name>.sql.
