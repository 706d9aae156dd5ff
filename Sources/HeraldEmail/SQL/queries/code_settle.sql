-- name: CodeSettle
-- Records how an `email.code` send ended and its provider calls (functions/email_otp_settle.sql):
-- true when the change applied (the calls are written only then). The calls are the columns of
-- `DeliveryAttempt`s in order: -1 for no HTTP status, '' for no error code or message id.
-- param verificationID: text
-- param messageID: text
-- param state: text
-- param reason: text
-- param provider: text
-- param providerMessageID: text
-- param uncertainSends: integer
-- params attempts: DeliveryAttempts
-- column applied: boolean
SELECT herald.email_otp_settle($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::int,
                               $8::text[], $9::text[], $10::int[], $11::text[], $12::text[], $13::int[]);
