-- The sends of code p_code_id that a provider may have charged for (issue 46, the budget of
-- sms.fallback.max_paid_sends): over every verification that carries the code (its first send, a
-- resend of it, each channel of its fallback), the attempts a provider accepted, the uncertain
-- sends (`uncertain_sends`: a delivery with a call that timed out after it was written, or a worker
-- stopped between a provider's answer and its commit and the send made again), and the sends in
-- flight (a verification, or a fallback's step, `sending`: decided, its provider's answer not
-- recorded yet), so two requests for one code at once cannot both pass the budget. Read by
-- key: the code's verifications, then each one's attempts (run-time partition pruning: the days
-- since it was made).
CREATE OR REPLACE FUNCTION herald.sms_paid_sends(p_code_id bigint)
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(sum(v.uncertain_sends + CASE WHEN v.state = 'sending' THEN 1 ELSE 0 END
                        + (SELECT count(*) FROM herald.sms_fallbacks f WHERE f.verification_id = v.verification_id AND f.state = 'sending')
                        + (SELECT count(*) FROM herald.sms_send_attempts a
                            WHERE a.verification_id = v.verification_id AND a.result = 'accepted'
                              AND a.created_at >= v.created_at - interval '1 minute')), 0)::bigint
      FROM herald.sms_verifications v
     WHERE v.code_id = p_code_id;
$function$;
