-- herald:legacy-version 18
-- The app evidence accepted for a verification (receipt or captcha), so a redelivery is not refused.

-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: the index is on a table created above in
--   this transaction: no other session can hold a lock on it or have written a row to it.

CREATE TABLE herald.sms_app_verifications (
    verification_id  text PRIMARY KEY,
    phone_number     text NOT NULL,
    method           text NOT NULL CHECK (method IN ('receipt','captcha')),
    -- recaptcha, hcaptcha, turnstile; or the receipt's app id.
    detail           text NOT NULL,
    score            double precision,
    hostname         text,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_app_verifications_created_idx ON herald.sms_app_verifications (created_at);
