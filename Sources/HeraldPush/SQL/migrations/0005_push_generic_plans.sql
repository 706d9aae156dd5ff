-- herald:legacy-version 26
-- Generic plans for the functions on a push job's path.

-- Generic plans (plan_cache_mode = force_generic_plan) for push_prepare, push_exhausted,
-- push_receipt_consume: now the SET clause of each one's functions/<name>.sql.
