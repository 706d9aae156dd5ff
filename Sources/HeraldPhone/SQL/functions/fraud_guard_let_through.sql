-- What the fraud guard let through in scope p_scope/p_key in the last p_window_minutes (its marks),
-- less those whose request then sent nothing (reused a code, refused by a limit, failed), counted
-- up to p_limit (issue 46: a burst judged inside itself needs to know whether the floor
-- is reached, not by how much). Read by scope and time (sms_fraud_marks_region_idx,
-- sms_fraud_marks_prefix_idx): at most p_limit index entries. Volatile, as its caller: it sees the
-- marks of the earlier requests its caller's group judged in the same statement.
-- plpgsql_check: accept routine is marked as VOLATILE, should be STABLE — a stable function reads with the snapshot of the statement that calls it; volatile, it reads the marks its caller wrote just before in the same transaction, which a burst judged in one group needs
CREATE OR REPLACE FUNCTION herald.fraud_guard_let_through(p_scope text, p_key text, p_window_minutes integer, p_limit bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    n bigint;
BEGIN
    IF p_scope = 'region' THEN
        SELECT count(*) INTO n FROM (SELECT 1 FROM herald.sms_fraud_marks m
                                      WHERE m.region = p_key AND m.created_at > now() - make_interval(mins => p_window_minutes)
                                        AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v
                                                         WHERE v.verification_id = m.verification_id AND v.state IN ('reused', 'refused', 'failed'))
                                      LIMIT p_limit) let_through;
    ELSE
        SELECT count(*) INTO n FROM (SELECT 1 FROM herald.sms_fraud_marks m
                                      WHERE m.prefix = p_key AND m.created_at > now() - make_interval(mins => p_window_minutes)
                                        AND NOT EXISTS (SELECT 1 FROM herald.sms_verifications v
                                                         WHERE v.verification_id = m.verification_id AND v.state IN ('reused', 'refused', 'failed'))
                                      LIMIT p_limit) let_through;
    END IF;
    RETURN n;
END;
$function$;
