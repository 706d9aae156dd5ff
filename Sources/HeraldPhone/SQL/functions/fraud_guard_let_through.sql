-- What the fraud guard let through in scope p_scope/p_key in the window of p_window_minutes (its
-- marks), less those whose request then sent nothing (reused a code, refused by a limit, failed),
-- at most p_limit (issue 46: a burst judged inside itself needs to know whether the floor is
-- reached, not by how much).
-- Issue 48: read from herald.sms_fraud_let_through, the count triggers keep per scope and minute
-- (functions/fraud_guard_let_through_marked.sql, fraud_guard_let_through_outcome.sql), over the
-- minutes herald.fraud_guard_check reads sms_fraud_counts over: at most p_window_minutes rows,
-- whatever p_limit and the window's traffic. It counted the marks one by one, each with a look at
-- its verification, up to p_limit: O(window) per request once a floor is large.
-- Volatile, as its caller: it sees the counts its caller's transaction added before it (a group
-- judged request by request without herald.fraud_guard_judge, whose marks' trigger counts each
-- at once; herald.fraud_guard_judge passes its group's marks to the check as pending instead).
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
    SELECT coalesce(sum(let_through), 0) INTO n FROM herald.sms_fraud_let_through
     WHERE scope = p_scope AND key = p_key
       AND minute > date_trunc('minute', now()) - make_interval(mins => p_window_minutes);
    RETURN least(greatest(n, 0), p_limit);
END;
$function$;
