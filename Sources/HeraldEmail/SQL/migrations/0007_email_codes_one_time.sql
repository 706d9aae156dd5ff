-- Email one-time codes (email.code): a numeric code mailed to an address and checked later, with
-- the expiry, tries per code and guessing lockout of the SMS codes (issue 35). Only the code's keyed
-- hash is kept (HMAC-SHA256 with its key id), never the code.

-- squawk-ignore-file prefer-bigint-over-int, prefer-identity, require-lock-timeout, require-statement-timeout
-- why: prefer-bigint-over-int: attempts, max_attempts, sends, code_sends and uncertain_sends count
--   per code or verification; the guessing columns hold a limit and seconds from the
--   configuration; failures and lockouts count per address.
-- why: prefer-identity: email_otp_codes.id is a bigserial, as herald.sms_codes.id: the same ids an
--   identity column makes. Only Herald's statements insert, never with an id, and the sequence
--   belongs to its column (it follows the table to herald_migrate; herald_worker may use it:
--   runtime 0004).
-- why: require-lock-timeout, require-statement-timeout: every index is on a table created above in
--   this transaction: no other session can hold a lock on it or have written a row to it.

-- One code per (address, purpose) while pending, as herald.sms_codes per (number, purpose).
-- `email` is the normal form (EmailAddress.normalize); personal data, purged with the row.
CREATE TABLE herald.email_otp_codes (
    id                    bigserial PRIMARY KEY,
    email                 text NOT NULL,
    purpose               text NOT NULL,
    status                text NOT NULL CHECK (status IN ('pending','verified','dead','expired','failed')),
    key_id                text NOT NULL,
    code_hash             bytea NOT NULL,
    attempts              integer NOT NULL DEFAULT 0,
    max_attempts          integer NOT NULL,
    sends                 integer NOT NULL DEFAULT 0,
    -- The guessing policy (email.code.guessing.*) the worker sent the code under.
    guess_limit           integer NOT NULL,
    guess_window_seconds  integer NOT NULL,
    lockout_seconds       integer NOT NULL,
    lockout_max_seconds   integer NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    last_sent_at          timestamptz,
    expires_at            timestamptz NOT NULL,
    finished_at           timestamptz
);
CREATE UNIQUE INDEX email_otp_codes_pending_idx ON herald.email_otp_codes (email, purpose) WHERE status = 'pending';
CREATE INDEX email_otp_codes_email_idx ON herald.email_otp_codes (email, purpose, id);
CREATE INDEX email_otp_codes_expires_idx ON herald.email_otp_codes (expires_at);

-- One row per verification_id (per email.code job); several may share a code (a request inside
-- the resend interval reuses the code just sent). Provider calls go to herald.email_send_attempts
-- under the verification_id (its request_id column).
CREATE TABLE herald.email_otp_verifications (
    verification_id      text PRIMARY KEY,
    code_id              bigint REFERENCES herald.email_otp_codes (id) ON DELETE CASCADE,
    email                text NOT NULL,
    purpose              text NOT NULL,
    message_id           text NOT NULL,
    state                text NOT NULL CHECK (state IN ('sending','retrying','sent','reused','refused','failed')),
    -- The code's `sends` this verification's email carried: a later send of the code supersedes it.
    code_sends           integer,
    -- The presence key of the worker that set `sending` (its advisory lock is held while it lives).
    owner_key            bigint,
    reason               text,
    provider             text,
    provider_message_id  text,
    uncertain_sends      integer NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_otp_verifications_code_idx ON herald.email_otp_verifications (code_id);
CREATE INDEX email_otp_verifications_created_idx ON herald.email_otp_verifications (created_at);

-- Wrong codes per address, across codes and purposes (as herald.sms_guess_failures per number):
-- reset by a success or by a quiet guess window after the last failure and the last lock.
CREATE TABLE herald.email_otp_guess_failures (
    email            text PRIMARY KEY,
    -- Wrong codes since the last lock (or the first failure of a quiet window).
    failures         integer NOT NULL DEFAULT 0,
    -- Locks so far: the next lasts lockout_seconds x 2^lockouts, capped.
    lockouts         integer NOT NULL DEFAULT 0,
    last_failure_at  timestamptz NOT NULL DEFAULT now(),
    locked_until     timestamptz,
    -- When the row no longer matters (purged after it).
    expires_at       timestamptz NOT NULL
);
CREATE INDEX email_otp_guess_failures_expires_idx ON herald.email_otp_guess_failures (expires_at);
