-- name: ReceiptApply
-- Applies a provider's receipt to the accepted send attempt it names
-- (functions/sms_receipt_apply.sql), searching the attempts made between `since` and `until`.
-- param provider: text
-- param providerMessageID: text
-- param status: text
-- param statusTime: timestamp with time zone
-- param errorCode: text?
-- param jobID: text
-- param since: timestamp with time zone
-- param until: timestamp with time zone
-- column result: text
-- column verificationID: text?
-- column phone: text?
-- column status: text?
-- column errorCode: text?
-- column sameJob: boolean
SELECT o_result, o_verification_id, o_phone, o_status, o_error_code, o_same_job
  FROM herald.sms_receipt_apply($1::text, $2::text, $3::text, $4::timestamptz, $5::text, $6::text, $7::timestamptz, $8::timestamptz);
