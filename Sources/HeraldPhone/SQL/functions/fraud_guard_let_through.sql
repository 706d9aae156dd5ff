-- What the fraud guard let through in scope p_scope/p_key in the window of p_window_minutes, at
-- most p_limit: herald.fraud_guard_activity's let-through count. Issue 48: the check and the
-- judge read it through herald.fraud_guard_activity, with the scope's other window sums; this is
-- kept for the body of herald.fraud_guard_check before that change (sms migration 0021's), which
-- calls it until the definitions of a `heraldctl migrate` replace that body. A later migration
-- drops it, as it will the check's older signatures.
-- plpgsql_check: accept routine is marked as VOLATILE, should be STABLE — a stable function reads with the snapshot of the statement that calls it; volatile, it reads the counts its caller's marks added just before in the same transaction, which a burst judged in one group needs
CREATE OR REPLACE FUNCTION herald.fraud_guard_let_through(p_scope text, p_key text, p_window_minutes integer, p_limit bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    n bigint;
BEGIN
    SELECT least(a.let_through, p_limit) INTO n FROM herald.fraud_guard_activity(p_scope, p_key, p_window_minutes) AS a;
    RETURN n;
END;
$function$;
