-- What a send of an email.code job did, with its provider calls (herald.email_send_attempts,
-- keyed by the verification_id), in one call; the calls are written only when the change applied,
-- so a write repeated after its deadline records nothing twice. p_state:
--   sent      a provider accepted the email (from `sending`)
--   retrying  every provider failed for now; the job is retried with a fresh code (from `sending`)
--   failed    a provider refused it for good, or the job ran out of tries (from `sending` or
--             `retrying`, only while p_message_id is the verification's latest job): its code
--             fails too unless a later send of the code (another verification's) superseded it
-- Returns whether the verification changed (then the caller emits its event).
CREATE OR REPLACE FUNCTION herald.email_otp_settle(p_verification_id text, p_message_id text, p_state text, p_reason text, p_provider text, p_provider_message_id text, p_uncertain integer, p_providers text[], p_results text[], p_http_statuses integer[], p_error_codes text[], p_message_ids text[], p_durations integer[])
 RETURNS boolean
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    ver herald.email_otp_verifications%ROWTYPE;
BEGIN
    SELECT * INTO ver FROM herald.email_otp_verifications WHERE verification_id = p_verification_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_state IN ('sent', 'retrying') THEN
        IF ver.state <> 'sending' THEN
            RETURN false;
        END IF;
    ELSIF p_state = 'failed' THEN
        IF ver.state NOT IN ('sending', 'retrying') OR ver.message_id <> p_message_id THEN
            RETURN false;
        END IF;
    ELSE
        RAISE EXCEPTION 'email_otp_settle: unknown state %', p_state;
    END IF;
    UPDATE herald.email_otp_verifications
       SET state = p_state, reason = CASE WHEN p_state = 'sent' THEN NULL ELSE p_reason END,
           provider = CASE WHEN p_state = 'sent' THEN NULLIF(p_provider, '') ELSE provider END,
           provider_message_id = CASE WHEN p_state = 'sent' THEN NULLIF(p_provider_message_id, '') ELSE provider_message_id END,
           uncertain_sends = uncertain_sends + p_uncertain, updated_at = now()
     WHERE verification_id = p_verification_id;
    IF p_state = 'failed' THEN
        UPDATE herald.email_otp_codes SET status = 'failed', finished_at = now()
         WHERE id = ver.code_id AND status = 'pending' AND sends IS NOT DISTINCT FROM ver.code_sends;
    END IF;
    INSERT INTO herald.email_send_attempts (request_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT p_verification_id, t.p, t.r, NULLIF(t.h, -1), NULLIF(t.e, ''), NULLIF(t.m, ''), t.d
      FROM unnest(p_providers, p_results, p_http_statuses, p_error_codes, p_message_ids, p_durations) AS t(p, r, h, e, m, d);
    RETURN true;
END;
$function$;
