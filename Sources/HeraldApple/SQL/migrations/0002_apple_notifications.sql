-- herald:legacy-version 22
-- Apple server-to-server notifications acted on, keyed by jti so that a replay is refused.

-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: both indexes are on a table created above
--   in this transaction: no other session can hold a lock on it or have written a row to it.

-- One row per apple.notification acted on (written in the transaction that acts on it).
-- jti: Apple's id of the notification; a second job with the same jti is a replay and is
-- refused. account_id: the account linked to the notification's sub when it was handled
-- (NULL: none). outcome: applied (the change was made), unchanged (a relay marking older
-- than the one stored), no_account (no account has this Apple identity), ignored (a type
-- Herald does not act on). Never the payload.
CREATE TABLE herald.apple_notifications (
    jti          text PRIMARY KEY,
    message_id   text NOT NULL,
    client_id    text NOT NULL,
    type         text NOT NULL,
    account_id   text,
    outcome      text NOT NULL DEFAULT 'applied' CHECK (outcome IN ('applied','unchanged','no_account','ignored')),
    issued_at    timestamptz NOT NULL,
    event_time   timestamptz NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX apple_notifications_account_idx ON herald.apple_notifications (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX apple_notifications_received_idx ON herald.apple_notifications (received_at);
