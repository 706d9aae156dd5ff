-- name: CodeVerified
-- A code that verified: used, and its number's wrong tries (of every purpose: they count
-- together) forgotten.
-- param codeID: bigint
WITH used AS (
    UPDATE herald.sms_codes SET status = 'verified', finished_at = now() WHERE id = $1::bigint
    RETURNING phone_number, purpose)
DELETE FROM herald.sms_guess_failures g USING used WHERE g.phone_number = used.phone_number;
