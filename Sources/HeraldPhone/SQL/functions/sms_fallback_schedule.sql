-- Enqueues, through the event outbox (in the caller's transaction), the `sms.fallback` job that
-- sends verification p_verification_id's channel p_step (0-based) for p_reason (`timeout`,
-- `undelivered`). p_routing_key: a wait queue's key on the jobs exchange p_exchange (the job
-- waits there first), NULL for at once. The job's message id depends only on the verification and
-- the step: the timeout and the receipt that both ask for a step are one job to the ledger. The
-- job names the verification's number: its send limits are taken with the decision; and the IP
-- of the request that started the verification (its job's client.ip, none without one), whose
-- per-IP limit the fallback's send takes too (issue 46).
CREATE OR REPLACE FUNCTION herald.sms_fallback_schedule(p_verification_id text, p_step integer, p_reason text,
                                                        p_exchange text, p_routing_key text)
 RETURNS void
 LANGUAGE sql
AS $function$
    INSERT INTO herald.event_outbox (exchange, name, message_id, body, routing_key)
    VALUES (p_exchange, 'sms.fallback',
            'fb-' || left(encode(sha256(convert_to(p_verification_id || ':' || p_step, 'UTF8')), 'hex'), 40),
            jsonb_build_object('version', 1, 'verification_id', p_verification_id, 'step', p_step, 'reason', p_reason,
                               'phone_number', (SELECT v.phone_number FROM herald.sms_verifications v WHERE v.verification_id = p_verification_id),
                               'client_ip', (SELECT f.job -> 'client' ->> 'ip' FROM herald.sms_fallbacks f WHERE f.verification_id = p_verification_id))::text,
            p_routing_key);
$function$;
