-- name: CodeVoid
-- Voids the code a verification carried if it is still pending (the verification was
-- canceled, or approved another way).
-- param verificationID: text
UPDATE herald.sms_codes c SET status = 'expired', finished_at = now()
  FROM herald.sms_verifications v
 WHERE v.verification_id = $1::text AND c.id = v.code_id AND c.status = 'pending';
