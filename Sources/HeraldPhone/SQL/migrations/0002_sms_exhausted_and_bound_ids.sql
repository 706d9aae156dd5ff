-- herald:legacy-version 8
-- A verification id bound to its number and purpose (sms_prepare decides invalid), and sms_exhausted.

-- herald.sms_prepare was redefined here: now functions/sms_prepare.sql.
-- herald.sms_exhausted was created here: now functions/sms_exhausted.sql.
