-- Uses a pending code the consume API has judged live (its row locked by the caller):
-- marks it used, supersedes every other pending code of its (address, mode), and for
-- verify_and_change_email records the recover_email request to the old address
-- (queued) and puts its job in the outbox, in the caller's transaction. Returns the
-- request's paired address (the old address; for recover_email the one it replaced).
CREATE OR REPLACE FUNCTION herald.email_use_code(p_id bigint)
 RETURNS text
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    v_code herald.email_codes;
    v_request herald.email_requests;
    v_recovery_id text;
BEGIN
    UPDATE herald.email_codes SET status = 'used', used_at = now()
     WHERE id = p_id AND status = 'pending' RETURNING * INTO v_code;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'email code % is not pending', p_id;
    END IF;
    UPDATE herald.email_codes SET status = 'superseded'
     WHERE email = v_code.email AND mode = v_code.mode AND status = 'pending';
    SELECT * INTO v_request FROM herald.email_requests WHERE request_id = v_code.request_id;
    IF v_code.mode = 'verify_and_change_email' AND v_request.recovery_job IS NOT NULL THEN
        v_recovery_id := v_request.recovery_job::jsonb ->> 'request_id';
        INSERT INTO herald.email_requests (request_id, message_id, email, mode, state, paired_email)
        VALUES (v_recovery_id, v_recovery_id, v_request.paired_email, 'recover_email', 'queued', v_code.email)
        ON CONFLICT (request_id) DO NOTHING;
        IF FOUND THEN
            INSERT INTO herald.event_outbox (exchange, name, message_id, body)
            VALUES (v_request.recovery_exchange, 'email.action', v_recovery_id, v_request.recovery_job);
        END IF;
    END IF;
    RETURN v_request.paired_email;
END
$function$;
