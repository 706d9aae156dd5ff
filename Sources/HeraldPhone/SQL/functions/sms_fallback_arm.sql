-- After verification p_verification_id's channel p_step (0-based, of p_channels) was sent, in the
-- transaction that records the send: on the last channel, the fallback ends (its row and sealed
-- code deleted); else the row is kept (made, with the sealed code and the job, on the first
-- channel; moved to p_step after) and, when the channel has a wait (p_wait_seconds > 0), the next
-- step's `timeout` job is enqueued through the wait queue's routing key p_routing_key.
CREATE OR REPLACE FUNCTION herald.sms_fallback_arm(p_verification_id text, p_channels text[], p_step integer, p_job jsonb,
                                                   p_key_id text, p_nonce bytea, p_ciphertext bytea, p_tag bytea,
                                                   p_wait_seconds integer, p_exchange text, p_routing_key text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_due timestamptz := CASE WHEN p_wait_seconds > 0 THEN now() + make_interval(secs => p_wait_seconds) END;
BEGIN
    IF p_step >= cardinality(p_channels) - 1 THEN
        DELETE FROM herald.sms_fallbacks WHERE verification_id = p_verification_id;
        RETURN;
    END IF;
    IF p_key_id IS NOT NULL THEN
        -- The first channel's send (or a retry of it, with a fresh code).
        INSERT INTO herald.sms_fallbacks AS f (verification_id, channels, step, job, key_id, nonce, ciphertext, tag, due_at)
        VALUES (p_verification_id, p_channels, p_step, p_job, p_key_id, p_nonce, p_ciphertext, p_tag, v_due)
        ON CONFLICT (verification_id) DO UPDATE
           SET channels = EXCLUDED.channels, step = EXCLUDED.step, job = EXCLUDED.job, key_id = EXCLUDED.key_id,
               nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext, tag = EXCLUDED.tag, due_at = EXCLUDED.due_at,
               state = 'waiting', message_id = NULL, owner_key = NULL, updated_at = now();
    ELSE
        UPDATE herald.sms_fallbacks SET step = p_step, due_at = v_due, state = 'waiting', message_id = NULL, owner_key = NULL, updated_at = now()
         WHERE verification_id = p_verification_id;
    END IF;
    IF v_due IS NOT NULL THEN
        PERFORM herald.sms_fallback_schedule(p_verification_id, p_step + 1, 'timeout', p_exchange, p_routing_key);
    END IF;
END;
$function$;
