-- name: LinkCodeUse
-- A link code used (functions/email_use_code.sql): its request's changed address when it
-- recovers an email, else NULL.
-- param id: bigint
-- column pairedEmail: text?
SELECT herald.email_use_code($1::bigint);
