-- What a `sms.fallback` job's send did, when this job (p_message_id) holds the fallback `sending`:
--   sent      a provider accepted it: the verification (still `sent`) names that provider, message
--             and channel; the fallback waits again (herald.sms_fallback_arm, in the same
--             transaction, moves it on or ends it)
--   retrying  every provider failed for now (p_reason): the job is retried through the delay queues
-- p_uncertain: calls that may have reached a provider although they failed. Returns the
-- verification (with its code) when it applied, for the attempts written beside (AttemptLog).
CREATE OR REPLACE FUNCTION herald.sms_fallback_record(p_verification_id text, p_message_id text, p_result text, p_provider text,
                                                      p_provider_message_id text, p_channel text, p_reason text, p_uncertain integer)
 RETURNS TABLE (verification_id text, code_id bigint)
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM 1 FROM herald.sms_verifications v WHERE v.verification_id = p_verification_id FOR UPDATE;
    UPDATE herald.sms_fallbacks x
       SET state = CASE p_result WHEN 'sent' THEN 'waiting' ELSE 'retrying' END,
           message_id = CASE p_result WHEN 'sent' THEN NULL ELSE x.message_id END,
           owner_key = NULL, updated_at = now()
     WHERE x.verification_id = p_verification_id AND x.message_id = p_message_id AND x.state = 'sending';
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE herald.sms_verifications v
       SET provider = CASE p_result WHEN 'sent' THEN p_provider ELSE v.provider END,
           provider_message_id = CASE p_result WHEN 'sent' THEN p_provider_message_id ELSE v.provider_message_id END,
           channel = CASE p_result WHEN 'sent' THEN p_channel ELSE v.channel END,
           reason = CASE p_result WHEN 'sent' THEN NULL ELSE p_reason END,
           uncertain_sends = v.uncertain_sends + p_uncertain, updated_at = now()
     WHERE v.verification_id = p_verification_id
    RETURNING v.verification_id, v.code_id;
END;
$function$;
