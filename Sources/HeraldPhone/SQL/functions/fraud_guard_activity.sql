-- What the fraud guard counts in scope p_scope/p_key over the window of p_window_minutes, the
-- minutes since date_trunc('minute', now()) - p_window_minutes (issue 48): the sends,
-- verifications and undelivered receipts counted (herald.sms_fraud_counts, which
-- herald.fraud_guard_sent, herald.fraud_guard_verified and the receipts keep), and what it let
-- through (herald.sms_fraud_let_through, kept by the marks' triggers and
-- herald.fraud_guard_judge's end: its marks, less those whose request then sent nothing), never
-- below 0. At most p_window_minutes rows of each table, whatever the window's traffic.
-- The one read of a window: herald.fraud_guard_judge reads each scope of its group with it, once,
-- at the group's start; herald.fraud_guard_check with it when no window is passed (p_window NULL);
-- herald.fraud_guard_let_through, kept for the previous check's body, with it too.
-- Its name sorts before its callers' (definitions are applied one by one, in file-name order, and
-- a PL/pgSQL body names functions unchecked): it exists before the judge and the check that call it.
-- Stable, without SET clauses, so PostgreSQL inlines it into the statement that calls it (the
-- judge's LATERAL): read with that statement's snapshot, which in a PL/pgSQL caller holds what
-- the caller's transaction wrote before it.
CREATE OR REPLACE FUNCTION herald.fraud_guard_activity(p_scope text, p_key text, p_window_minutes integer)
 RETURNS TABLE(sent bigint, verified bigint, undelivered bigint, let_through bigint)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT c.sent, c.verified, c.undelivered, l.let_through
      FROM (SELECT coalesce(sum(n.sent), 0)::bigint AS sent, coalesce(sum(n.verified), 0)::bigint AS verified,
                   coalesce(sum(n.undelivered), 0)::bigint AS undelivered
              FROM herald.sms_fraud_counts n
             WHERE n.scope = p_scope AND n.key = p_key
               AND n.minute > date_trunc('minute', now()) - make_interval(mins => p_window_minutes)) AS c
     CROSS JOIN (SELECT greatest(coalesce(sum(t.let_through), 0), 0)::bigint AS let_through
                   FROM herald.sms_fraud_let_through t
                  WHERE t.scope = p_scope AND t.key = p_key
                    AND t.minute > date_trunc('minute', now()) - make_interval(mins => p_window_minutes)) AS l;
$function$;
