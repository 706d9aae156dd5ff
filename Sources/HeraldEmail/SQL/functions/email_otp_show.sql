-- What `heraldctl verify show-email` prints for an email.code verification: its state and
-- provider, and its code's status, tries and expiry (never the code or its hash); NULL when there
-- is no such verification. The provider calls are read from herald.email_send_attempts apart.
CREATE OR REPLACE FUNCTION herald.email_otp_show(p_verification_id text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
    SELECT jsonb_strip_nulls(jsonb_build_object(
               'verification_id', v.verification_id, 'kind', 'code', 'state', v.state, 'reason', v.reason,
               'email', v.email, 'purpose', v.purpose, 'provider', v.provider,
               'provider_message_id', v.provider_message_id, 'uncertain_sends', v.uncertain_sends,
               'created_at', to_char(v.created_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'),
               'updated_at', to_char(v.updated_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'),
               'code', CASE WHEN c.id IS NULL THEN NULL ELSE jsonb_build_object(
                   'status', c.status, 'key_id', c.key_id, 'attempts', c.attempts, 'max_attempts', c.max_attempts,
                   'sends', c.sends, 'superseded', c.sends IS DISTINCT FROM v.code_sends,
                   'expires_at', to_char(c.expires_at, 'YYYY-MM-DD"T"HH24:MI:SSOF'),
                   'finished_at', to_char(c.finished_at, 'YYYY-MM-DD"T"HH24:MI:SSOF')) END))
      FROM herald.email_otp_verifications v LEFT JOIN herald.email_otp_codes c ON c.id = v.code_id
     WHERE v.verification_id = p_verification_id
$function$;
