-- Adds p_delta (1: a mark that counts; -1: one that no longer does) to the let-through count
-- (herald.sms_fraud_let_through, issue 48) of a region and a prefix in the minute of p_at, a
-- mark's created_at; the region first, as every writer of that table locks its rows (one order:
-- two groups judged at once whose requests share a region wait for each other, they do not
-- deadlock). A minute a day or more before the current one is left alone: no window (at most
-- 1440 minutes) reads it again, and cleanup runs purge it.
-- PL/pgSQL, not SQL: its statement's plan is kept per connection (a LANGUAGE sql function called
-- from a trigger is planned again at each call: 0.1 ms more per mark).
CREATE OR REPLACE FUNCTION herald.fraud_guard_let_through_add(p_region text, p_prefix text, p_at timestamp with time zone, p_delta integer)
 RETURNS void
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
BEGIN
    IF date_trunc('minute', p_at) > date_trunc('minute', now()) - interval '1 day' THEN
        INSERT INTO herald.sms_fraud_let_through AS c (scope, key, minute, let_through)
        VALUES ('region', p_region, date_trunc('minute', p_at), p_delta), ('prefix', p_prefix, date_trunc('minute', p_at), p_delta)
        ON CONFLICT (scope, key, minute) DO UPDATE SET let_through = c.let_through + EXCLUDED.let_through;
    END IF;
END;
$function$;
