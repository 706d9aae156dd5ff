-- name: CodeShow
-- An `email.code` verification as `heraldctl verify show-email` prints it (JSON, nothing secret;
-- functions/email_otp_show.sql), NULL when there is none.
-- param verificationID: text
-- column record: text?
SELECT herald.email_otp_show($1::text)::text;
