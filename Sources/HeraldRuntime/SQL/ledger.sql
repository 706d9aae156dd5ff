-- Herald's migration ledger: one row per versioned migration applied and per definition file
-- applied (with the checksum of the text that ran). `heraldctl migrate` creates it before
-- anything else, and refuses to run when an applied migration's file no longer has its checksum.
CREATE TABLE IF NOT EXISTS public.herald_schema_ledger (
    schema_group  text NOT NULL,               -- runtime, sms, email, push, cleanup, apple
    kind          text NOT NULL CHECK (kind IN ('migration', 'definition')),
    path          text NOT NULL,               -- below the module's SQL/ folder: migrations/0001_platform.sql
    version       integer,                     -- a migration's number in its group
    checksum      text NOT NULL,               -- SHA-256 of the file's text, hex
    how           text NOT NULL DEFAULT 'applied' CHECK (how IN ('applied', 'adopted')),
    applied_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schema_group, path),
    CHECK ((kind = 'migration') = (version IS NOT NULL))
);
