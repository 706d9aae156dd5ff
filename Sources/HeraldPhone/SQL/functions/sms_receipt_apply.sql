-- A provider's delivery receipt for the message it accepted under p_message_id: the send attempt
-- (result accepted, newest first, made between p_since and p_until: the days searched) takes the
-- status if it moves the message on — queued, then sent, then delivered or undelivered (final:
-- the first final status stays) — so receipts may come twice or out of order: a late `sent`
-- never undoes `delivered`. p_at: when the status happened (the provider's time, else when
-- herald-api received it); p_job: the sms.receipt job's message id, kept with the status.
-- o_result: applied, duplicate (the attempt has this status already), stale (it has a later or a
-- final one) or unknown (no such accepted attempt: the send's commit may still be on its way).
-- o_status and o_error_code: the attempt's delivery status and error code after the call;
-- o_same_job: the status was set by p_job itself (a repeat of the job that applied it).
CREATE OR REPLACE FUNCTION herald.sms_receipt_apply(p_provider text, p_message_id text, p_status text, p_at timestamptz, p_error_code text,
                                                    p_job text, p_since timestamptz, p_until timestamptz)
 RETURNS TABLE (o_result text, o_verification_id text, o_phone text, o_status text, o_error_code text, o_same_job boolean)
 LANGUAGE plpgsql
AS $function$
DECLARE
    att record;
    v_phone text;
    v_new int := CASE p_status WHEN 'queued' THEN 1 WHEN 'sent' THEN 2 WHEN 'delivered' THEN 3 WHEN 'undelivered' THEN 3 END;
    v_old int;
BEGIN
    IF v_new IS NULL THEN
        RAISE EXCEPTION 'delivery status % is not queued, sent, delivered or undelivered', p_status USING ERRCODE = '22023';
    END IF;
    -- The bounds on created_at leave the days outside them unsearched (run-time partition pruning).
    SELECT a.id, a.created_at, a.verification_id, a.delivery_status, a.delivery_error_code, a.delivery_receipt_id INTO att
      FROM herald.sms_send_attempts a
     WHERE a.provider_message_id = p_message_id AND a.provider = p_provider AND a.result = 'accepted'
       AND a.created_at >= p_since AND a.created_at <= p_until
     ORDER BY a.created_at DESC, a.id DESC
     LIMIT 1
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'unknown'::text, NULL::text, NULL::text, NULL::text, NULL::text, false;
        RETURN;
    END IF;
    SELECT v.phone_number INTO v_phone FROM herald.sms_verifications v WHERE v.verification_id = att.verification_id;
    v_old := CASE att.delivery_status WHEN 'queued' THEN 1 WHEN 'sent' THEN 2 WHEN 'delivered' THEN 3 WHEN 'undelivered' THEN 3 ELSE 0 END;
    IF att.delivery_status = p_status OR v_old >= v_new THEN
        RETURN QUERY SELECT CASE WHEN att.delivery_status = p_status THEN 'duplicate' ELSE 'stale' END::text,
                            att.verification_id::text, v_phone, att.delivery_status::text, att.delivery_error_code::text,
                            att.delivery_receipt_id IS NOT DISTINCT FROM p_job;
        RETURN;
    END IF;
    UPDATE herald.sms_send_attempts
       SET delivery_status = p_status, delivery_status_at = p_at, delivery_error_code = p_error_code, delivery_receipt_id = p_job
     WHERE id = att.id AND created_at = att.created_at;
    IF p_status = 'undelivered' AND p_provider <> 'whatsapp' THEN
        -- The fraud guard learns from it: one more undelivered SMS in the verification's scopes
        -- (those the guard marked when it let the verification through), in the minute of the
        -- send, beside the send's own count (a late report belongs to its send's window, not to
        -- today's). Not WhatsApp's: "not on WhatsApp" says nothing of SMS pumping. Rows in the
        -- order herald.fraud_guard_sent locks them (scope, key): no deadlock with a send's count.
        INSERT INTO herald.sms_fraud_counts AS c (scope, key, minute, undelivered)
        SELECT s.scope, s.key, date_trunc('minute', att.created_at), 1
          FROM herald.sms_fraud_marks m, LATERAL (VALUES ('region', m.region), ('prefix', m.prefix)) AS s(scope, key)
         WHERE m.verification_id = att.verification_id
         ORDER BY s.scope, s.key
        ON CONFLICT (scope, key, minute) DO UPDATE SET undelivered = c.undelivered + 1;
    END IF;
    RETURN QUERY SELECT 'applied'::text, att.verification_id::text, v_phone, p_status, p_error_code, true;
END;
$function$;
