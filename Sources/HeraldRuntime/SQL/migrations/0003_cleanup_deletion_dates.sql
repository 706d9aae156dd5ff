-- herald:legacy-version 11
-- The accounts' kept deletion dates: delete_after, and the schedule frozen when cleanup is switched off.

-- squawk-ignore-file require-lock-timeout, require-statement-timeout
-- why: require-lock-timeout, require-statement-timeout: on a fresh install the tables are empty. On
--   a database upgraded from before legacy version 11, the first ALTER takes herald.accounts'
--   ACCESS EXCLUSIVE lock until commit (the column is nullable without a default: no rewrite), then
--   the check and the index each read the table once; herald.cleanup_policy is one row. Frozen: a
--   SET would be a new statement in a file whose checksum the ledger keeps.

-- Deletion dates that outlive the switch (Firebase: "If you turn off automatic clean-up,
-- any anonymous account scheduled for deletion remains scheduled for deletion").
-- An anonymous account's date (AccountDeletion) is, first that applies:
--   delete_after, a date written for good (see below);
--   while disabled, for an account created before kept_until (the disabling time):
--   greatest(created_at, kept_enabled_at) + kept_retention, the schedule frozen when
--   cleanup was switched off (disable writes one policy row, no account row);
--   while enabled: greatest(created_at, enabled_at) + retention.
-- Enable writes the frozen dates into delete_after (in batches) before switching on,
-- so a later retention change or enabling time never moves them. Linking a provider
-- clears delete_after (the trigger below), and a linked account has no date.
ALTER TABLE herald.accounts ADD COLUMN delete_after timestamptz;
-- Linked or provider-created accounts never hold a written date.
-- why: constraint-missing-not-valid: delete_after is added just above, NULL in every row, so every
--   row passes; and the ADD COLUMN above already holds herald.accounts' ACCESS EXCLUSIVE lock until
--   commit, so NOT VALID then VALIDATE in this transaction would shorten no lock.
-- squawk-ignore constraint-missing-not-valid
ALTER TABLE herald.accounts ADD CONSTRAINT accounts_delete_after_anonymous CHECK (delete_after IS NULL OR is_anonymous);
-- The due scan of written dates (runs delete them oldest date first, enabled or not).
-- why: require-concurrent-index-creation: CREATE INDEX CONCURRENTLY cannot run inside the
--   migrator's transaction, and would gain nothing here: this transaction already holds
--   herald.accounts' ACCESS EXCLUSIVE lock (ADD COLUMN above), and the index is partial on
--   delete_after IS NOT NULL, true of no row yet.
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX accounts_delete_after_idx ON herald.accounts (delete_after) WHERE delete_after IS NOT NULL;
-- herald.account_provider_linked was redefined here: now functions/account_provider_linked.sql.
-- The schedule frozen by the last disable (all three set, or none).
ALTER TABLE herald.cleanup_policy ADD COLUMN kept_enabled_at timestamptz;
ALTER TABLE herald.cleanup_policy ADD COLUMN kept_retention interval;
ALTER TABLE herald.cleanup_policy ADD COLUMN kept_until timestamptz;
-- why: constraint-missing-not-valid: herald.cleanup_policy is one row (its singleton key), and the
--   three columns checked are added just above, NULL, which passes.
-- squawk-ignore constraint-missing-not-valid
ALTER TABLE herald.cleanup_policy ADD CONSTRAINT cleanup_policy_kept_schedule
    CHECK ((kept_until IS NULL) = (kept_enabled_at IS NULL) AND (kept_until IS NULL) = (kept_retention IS NULL));
-- Existing data: under the old rule an enabled policy judged every anonymous account by
-- greatest(created_at, enabled_at) + retention, which is the date the new rule computes
-- while enabled, so nothing is written for it; a disabled policy had scheduled nothing
-- (disabling cancelled the schedule), so no schedule is frozen either. The backfill is
-- the identity, on purpose: no delete_after, no kept_* column is set here.
