-- The sends of code p_code_id that a provider may have charged for (issue 46, the budget of
-- sms.fallback.max_paid_sends): over every verification that carries the code (its first send, a
-- resend of it, each channel of its fallback), the attempts a provider accepted, and the
-- uncertain sends (`uncertain_sends`: a delivery with a call that timed out after it was written,
-- or a worker stopped between a provider's answer and its commit and the send made again). Read by
-- key: the code's verifications, then each one's attempts (run-time partition pruning: the days
-- since it was made).
CREATE OR REPLACE FUNCTION herald.sms_paid_sends(p_code_id bigint)
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(sum(v.uncertain_sends + (SELECT count(*) FROM herald.sms_send_attempts a
                                              WHERE a.verification_id = v.verification_id AND a.result = 'accepted'
                                                AND a.created_at >= v.created_at - interval '1 minute')), 0)::bigint
      FROM herald.sms_verifications v
     WHERE v.code_id = p_code_id;
$function$;
