-- Spends a confirmed receipt for p_for (an SMS verification id), once: 'ok' for the first
-- caller and again for the same p_for (a redelivered job), else why not:
--   unknown      no such receipt
--   other_app    confirmed for another app id
--   unconfirmed  its secret was not confirmed (confirmAppVerification)
--   expired      confirmed more than p_max_age_seconds ago
--   used         already spent for another verification
--
-- A confirmed receipt is evidence of a genuine app for one SMS verification
-- (`sms.verification`'s `app_verification.receipt`). This function is the contract between the
-- channels: herald-sms calls it by name, never through HeraldPush's Swift (a channel never
-- imports another).
CREATE OR REPLACE FUNCTION herald.push_receipt_consume(p_receipt text, p_app_id text, p_max_age_seconds integer, p_for text)
 RETURNS text
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    r herald.push_verifications%ROWTYPE;
BEGIN
    SELECT * INTO r FROM herald.push_verifications WHERE receipt = p_receipt FOR UPDATE;
    IF NOT FOUND THEN RETURN 'unknown'; END IF;
    IF r.consumed_for = p_for THEN RETURN 'ok'; END IF;
    IF r.consumed_at IS NOT NULL THEN RETURN 'used'; END IF;
    IF r.app_id <> p_app_id THEN RETURN 'other_app'; END IF;
    IF r.secret_status <> 'verified' OR r.verified_at IS NULL THEN RETURN 'unconfirmed'; END IF;
    IF r.verified_at < now() - make_interval(secs => p_max_age_seconds) THEN RETURN 'expired'; END IF;
    UPDATE herald.push_verifications SET consumed_at = now(), consumed_for = p_for, updated_at = now()
     WHERE receipt = p_receipt;
    RETURN 'ok';
END;
$function$;
