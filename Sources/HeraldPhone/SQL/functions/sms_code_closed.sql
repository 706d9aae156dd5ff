-- Why code p_code (a row of herald.sms_codes; all NULL when there is none) may not go out again for
-- a verification that sent it as its p_code_sends-th send to p_phone: `code_<status>` (used,
-- killed, gone), `code_expired`, `code_sent_again` (another request sent it since: that send
-- answers the verification), `locked_out` (the number is locked for guessing); NULL when it may.
-- herald.sms_fallback_judge asks it before the other judgments (without a lock), and
-- herald.sms_fallback_take again once it holds the code (issue 46: a step whose code is closed
-- takes no quota).
CREATE OR REPLACE FUNCTION herald.sms_code_closed(p_code herald.sms_codes, p_code_sends integer, p_phone text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN (p_code).id IS NULL OR (p_code).status <> 'pending' THEN 'code_' || coalesce((p_code).status, 'gone')
                WHEN (p_code).expires_at <= now() THEN 'code_expired'
                WHEN (p_code).sends IS DISTINCT FROM p_code_sends THEN 'code_sent_again'
                WHEN EXISTS (SELECT 1 FROM herald.sms_guess_failures g
                              WHERE g.phone_number = p_phone AND g.locked_until > now()) THEN 'locked_out' END;
$function$;
