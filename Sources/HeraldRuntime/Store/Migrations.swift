import Foundation

/// The schema, as ordered, append-only migrations. Never edit a released one; add another.
public struct Migration: Sendable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// The statements of ``sql``: each ends with a `;` at the end of a line (the extended
    /// query protocol takes one statement at a time), except inside a `$$` function body.
    /// Comment lines are dropped.
    public var statements: [String] {
        var out: [String] = []
        var current = ""
        var inBody = false
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("--") || trimmed.isEmpty { continue }
            current += line + "\n"
            if line.components(separatedBy: "$$").count % 2 == 0 { inBody.toggle() }
            if !inBody, trimmed.hasSuffix(";") {
                out.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                current = ""
            }
        }
        let rest = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { out.append(rest) }
        return out
    }
}

/// The runtime's own migrations: the ledger, the event outbox and the dev outbox (1), and the
/// account directory with the cleanup policy and runs (3: accounts are shared by every channel
/// that reads or deletes them; a released migration is never split), and the accounts'
/// kept deletion dates (11), the migration and worker database roles (12, Migrations+Roles.swift), and the Apple private
/// relay addresses herald-apple marks and herald-email reads (21, Migrations+AppleRelay.swift). Each channel target
/// declares its own (``HeraldChannel/migrations``); a process applies the union.
public enum Migrations {
    /// The highest version in `migrations`.
    public static func latest(_ migrations: [Migration]) -> Int { migrations.map(\.version).max() ?? 0 }

    public static let runtime: [Migration] = [
        Migration(version: 1, name: "platform", sql: """
            CREATE SCHEMA IF NOT EXISTS herald;

            -- One row per job message_id: the idempotency ledger of the job runner.
            CREATE TABLE herald.job_runs (
                message_id   text PRIMARY KEY,
                job_type     text NOT NULL,
                queue        text NOT NULL,
                status       text NOT NULL CHECK (status IN ('running','retrying','completed','rejected','dead')),
                attempts     integer NOT NULL DEFAULT 1,
                owner_key    bigint,
                claim_token  text,
                lease_until  timestamptz,
                reason       text,
                created_at   timestamptz NOT NULL DEFAULT now(),
                updated_at   timestamptz NOT NULL DEFAULT now(),
                finished_at  timestamptz
            );
            CREATE INDEX job_runs_finished_idx ON herald.job_runs (finished_at) WHERE finished_at IS NOT NULL;
            CREATE INDEX job_runs_status_idx ON herald.job_runs (queue, status);

            -- Events written with a job's outcome, relayed to exchange herald.events.
            CREATE TABLE herald.event_outbox (
                id           bigserial PRIMARY KEY,
                exchange     text NOT NULL,
                name         text NOT NULL,
                message_id   text NOT NULL,
                body         text NOT NULL,
                created_at   timestamptz NOT NULL DEFAULT now()
            );

            CREATE INDEX event_outbox_exchange_idx ON herald.event_outbox (exchange, id);

            -- What the dev outbox provider "delivered", instead of an SMS, email or push.
            CREATE TABLE herald.dev_outbox (
                id           bigserial PRIMARY KEY,
                kind         text NOT NULL,
                message_id   text NOT NULL UNIQUE,
                job_type     text NOT NULL,
                recipient    text NOT NULL,
                body         jsonb NOT NULL,
                created_at   timestamptz NOT NULL DEFAULT now()
            );
            """),
        Migration(version: 3, name: "cleanup", sql: """
            -- Accounts, as the front API keeps them. An anonymous account that links any provider
            -- is upgraded: the trigger below clears is_anonymous, and cleanup never touches it.
            CREATE TABLE herald.accounts (
                id               text PRIMARY KEY,
                created_at       timestamptz NOT NULL DEFAULT now(),
                is_anonymous     boolean NOT NULL DEFAULT true,
                last_sign_in_at  timestamptz,
                disabled         boolean NOT NULL DEFAULT false,
                upgraded_at      timestamptz
            );
            -- The eligibility scan: anonymous (hence unlinked) accounts, oldest first.
            CREATE INDEX accounts_anonymous_created_idx ON herald.accounts (created_at) WHERE is_anonymous;

            CREATE TABLE herald.account_providers (
                account_id    text NOT NULL REFERENCES herald.accounts (id) ON DELETE CASCADE,
                provider      text NOT NULL,
                provider_uid  text NOT NULL,
                linked_at     timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (account_id, provider),
                UNIQUE (provider, provider_uid)
            );

            -- Linking a provider upgrades the account, whichever client inserted the link. Updating
            -- the account row also makes a cleanup batch that locks it later re-check is_anonymous.
            CREATE FUNCTION herald.account_provider_linked() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE herald.accounts SET is_anonymous = false, upgraded_at = coalesce(upgraded_at, now()) WHERE id = NEW.account_id AND is_anonymous; RETURN NEW; END $$;
            CREATE TRIGGER account_providers_upgrade AFTER INSERT ON herald.account_providers
                FOR EACH ROW EXECUTE FUNCTION herald.account_provider_linked();

            -- The cleanup policy: one row. enabled_at is when cleanup was last switched on.
            CREATE TABLE herald.cleanup_policy (
                singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                enabled     boolean NOT NULL DEFAULT false,
                enabled_at  timestamptz,
                retention   interval NOT NULL DEFAULT interval '30 days' CHECK (retention > interval '0'),
                updated_at  timestamptz NOT NULL DEFAULT now(),
                CHECK (NOT enabled OR enabled_at IS NOT NULL)
            );
            INSERT INTO herald.cleanup_policy DEFAULT VALUES;

            -- One row per cleanup run; counts are added by each batch's transaction.
            CREATE TABLE herald.cleanup_runs (
                id                 text PRIMARY KEY,
                status             text NOT NULL CHECK (status IN ('scheduled','running','completed','cancelled','failed')),
                dry_run            boolean NOT NULL DEFAULT false,
                max_accounts       bigint NOT NULL CHECK (max_accounts > 0),
                fan_out            integer NOT NULL DEFAULT 1,
                retention          interval,
                enabled_at         timestamptz,
                requested_at       timestamptz NOT NULL DEFAULT now(),
                started_at         timestamptz,
                ended_at           timestamptz,
                heartbeat_at       timestamptz NOT NULL DEFAULT now(),
                eligible_at_start  bigint,
                accounts_deleted   bigint NOT NULL DEFAULT 0,
                purged             jsonb NOT NULL DEFAULT '{}',
                batches            bigint NOT NULL DEFAULT 0,
                joins              integer NOT NULL DEFAULT 0,
                reason             text
            );
            -- At most one active (non-dry) run: a second schedule cannot start a duplicate.
            CREATE UNIQUE INDEX cleanup_runs_one_active_idx ON herald.cleanup_runs ((true))
                WHERE status IN ('scheduled','running') AND NOT dry_run;
            CREATE INDEX cleanup_runs_requested_idx ON herald.cleanup_runs (requested_at DESC);
            CREATE INDEX cleanup_runs_ended_idx ON herald.cleanup_runs (ended_at) WHERE ended_at IS NOT NULL;

            -- Purge scans by age. (Not on event_outbox: the relay keeps it small, its purge is
            -- off by default, and an index there would cost every account.deleted insert.)
            CREATE INDEX dev_outbox_created_idx ON herald.dev_outbox (created_at);
            """),
        Migration(version: 11, name: "cleanup_deletion_dates", sql: """
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
            ALTER TABLE herald.accounts ADD CONSTRAINT accounts_delete_after_anonymous CHECK (delete_after IS NULL OR is_anonymous);
            -- The due scan of written dates (runs delete them oldest date first, enabled or not).
            CREATE INDEX accounts_delete_after_idx ON herald.accounts (delete_after) WHERE delete_after IS NOT NULL;
            CREATE OR REPLACE FUNCTION herald.account_provider_linked() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE herald.accounts SET is_anonymous = false, upgraded_at = coalesce(upgraded_at, now()), delete_after = NULL WHERE id = NEW.account_id AND is_anonymous; RETURN NEW; END $$;
            -- The schedule frozen by the last disable (all three set, or none).
            ALTER TABLE herald.cleanup_policy ADD COLUMN kept_enabled_at timestamptz;
            ALTER TABLE herald.cleanup_policy ADD COLUMN kept_retention interval;
            ALTER TABLE herald.cleanup_policy ADD COLUMN kept_until timestamptz;
            ALTER TABLE herald.cleanup_policy ADD CONSTRAINT cleanup_policy_kept_schedule
                CHECK ((kept_until IS NULL) = (kept_enabled_at IS NULL) AND (kept_until IS NULL) = (kept_retention IS NULL));
            -- Existing data: under the old rule an enabled policy judged every anonymous account by
            -- greatest(created_at, enabled_at) + retention, which is the date the new rule computes
            -- while enabled, so nothing is written for it; a disabled policy had scheduled nothing
            -- (disabling cancelled the schedule), so no schedule is frozen either. The backfill is
            -- the identity, on purpose: no delete_after, no kept_* column is set here.
            """),
        databaseRoles,
        appleRelayAddresses,
    ]
}
