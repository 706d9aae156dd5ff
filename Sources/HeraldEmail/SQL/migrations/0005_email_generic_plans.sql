-- herald:legacy-version 24
-- Generic plans for the functions on an email job's path.

-- Generic plans (plan_cache_mode = force_generic_plan) for email_prepare, email_rate_take,
-- email_use_code: now the SET clause of each one's functions/<name>.sql.
