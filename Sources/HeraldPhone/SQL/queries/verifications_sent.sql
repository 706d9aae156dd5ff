-- name: VerificationsSent
-- Verifications whose message a provider accepted, `sent` with their provider calls, in one
-- statement (only those still `sending`: a write repeated after its deadline records nothing
-- twice). Per verification: what the accepted call said (provider, message id; '' for none),
-- the SMS's segments and encoding (-1 and '' for a message that was no SMS), the uncertain
-- sends it adds, its channel. Then every call, each naming its verification (`callVerificationIDs`),
-- as the columns of `DeliveryAttempt`s: -1 for no HTTP status, '' for no error code or message id.
-- param verificationIDs: text[]
-- param acceptedProviders: text[]
-- param acceptedMessageIDs: text[]
-- param segments: integer[]
-- param encodings: text[]
-- param uncertainSends: integer[]
-- param channels: text[]
-- params attempts: DeliveryAttempts
-- param callVerificationIDs: text[]
-- column sent: bigint
WITH v AS (
    UPDATE herald.sms_verifications s
       SET state = 'sent', reason = NULL, provider = NULLIF(i.provider, ''), provider_message_id = NULLIF(i.message_id, ''),
           segments = NULLIF(i.segments, -1), encoding = NULLIF(i.encoding, ''), uncertain_sends = s.uncertain_sends + i.uncertain,
           channel = i.channel, updated_at = now()
      FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::text[])
           AS i(verification_id, provider, message_id, segments, encoding, uncertain, channel)
     WHERE s.verification_id = i.verification_id AND s.state = 'sending'
    RETURNING s.verification_id, s.code_id
), a AS (
    INSERT INTO herald.sms_send_attempts (verification_id, provider, result, http_status, error_code, provider_message_id, duration_ms)
    SELECT v.verification_id, p, r, NULLIF(h, -1), NULLIF(e, ''), NULLIF(m, ''), d
      FROM unnest($8::text[], $9::text[], $10::int[], $11::text[], $12::text[], $13::int[], $14::text[])
           AS t(p, r, h, e, m, d, key) JOIN v ON v.verification_id = t.key
)
SELECT count(*) FROM v;
