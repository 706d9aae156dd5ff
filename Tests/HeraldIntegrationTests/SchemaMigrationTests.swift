import Foundation
import HeraldClient
@testable import HeraldRuntime
import HeraldStubs
import HeraldWorkers
import PostgresNIO
import Testing

/// The migrator on the real PostgreSQL: a database left by the old single-sequence migrator
/// (Fixtures/legacy-v29.sql, frozen, with rows in every table) upgrades to exactly the schema of
/// a fresh install and keeps every row; an edited migration is refused with nothing applied;
/// `heraldctl migrate --dry-run` and `migrate status` tell the truth.
@Suite(.needsServers) struct SchemaMigrationTests {
    static var fixture: String {
        TestEnvironment.root.appendingPathComponent("Tests/HeraldIntegrationTests/Fixtures/legacy-v29.sql").path
    }

    /// The schema as pg_dump prints it, less the lines that differ per dump (psql's \restrict keys)
    /// and the objects whose dump names any of `without`.
    func schema(_ url: String, without: [String] = []) async throws -> String {
        try await runPostgresTool("pg_dump", ["--schema-only"], url: url)
            .split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict") }
            .joined(separator: "\n")
            .components(separatedBy: "\n--\n-- Name: ")
            .filter { object in !without.contains { object.contains($0) } }
            .joined(separator: "\n--\n-- Name: ")
    }

    /// Every table of schema herald (a partitioned one as a whole): its row count and a digest of its rows.
    func rows(_ client: PostgresClient) async throws -> [String: String] {
        var tables: [String] = []
        for try await name in try await client.query("""
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'herald' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1
            """, logger: TestEnvironment.logger("test.schema")).decode(String.self) { tables.append(name) }
        var out: [String: String] = [:]
        for table in tables {
            let digest = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT count(*)::text || ' ' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM herald.\(table) t
                """), logger: TestEnvironment.logger("test.schema")).decode(String.self).first { _ in true }
            out[table] = digest
        }
        return out
    }

    /// sms 0011 merges a number's wrong-code counts of several purposes, adding up only the rows
    /// still in their window (`expires_at > now()`). The fixture's two rows were in theirs when it was
    /// dumped and are past it a day later; the file stays frozen, so the restored rows' times move
    /// relative to now (its newest failure an hour ago, both still in their one-day window), and each
    /// side of the window gets rows as the old `sms_guess_failed` leaves them (a lock sets `failures`
    /// back to 0; `expires_at` is a window after the later of the last failure and the lock's end):
    /// +447700900456 three failures for `mfa_enroll` since a lock that ended two hours ago (in its
    /// window), +12025550147 four for `sign_in` after a lock two days ago and +33612345678 two a day
    /// and a half ago (past theirs).
    func placeGuessFailuresAroundNow(_ client: PostgresClient) async throws {
        let logger = TestEnvironment.logger("test.schema")
        try await client.query("""
            UPDATE herald.sms_guess_failures
               SET last_failure_at = last_failure_at + shift, locked_until = locked_until + shift, expires_at = expires_at + shift
              FROM (SELECT now() - interval '1 hour' - max(last_failure_at) AS shift FROM herald.sms_guess_failures) moved
            """, logger: logger)
        try await client.query("""
            INSERT INTO herald.sms_guess_failures (phone_number, purpose, failures, lockouts, last_failure_at, locked_until, expires_at) VALUES
                ('+447700900456', 'mfa_enroll', 3, 1, now() - interval '1 hour', now() - interval '2 hours', now() - interval '1 hour' + interval '1 day'),
                ('+12025550147', 'sign_in', 4, 1, now() - interval '48 hours', now() - interval '49 hours', now() - interval '24 hours'),
                ('+33612345678', 'sign_in', 2, 0, now() - interval '36 hours', NULL, now() - interval '12 hours')
            """, logger: logger)
    }

    @Test func anOldDatabaseUpgradesToExactlyAFreshInstallAndKeepsEveryRow() async throws {
        let logger = TestEnvironment.logger("test.schema")
        try await withScratchDatabase("upgrade") { oldURL, old in
            // The fixture's owners and grants name the roles (cluster-wide): make sure they exist.
            let roles = try #require(RuntimeSchema.group.migrations.first { $0.name == "database_roles" }?.file.statements.first)
            try await old.query(PostgresQuery(unsafeSQL: roles), logger: logger)
            _ = try await runPostgresTool("psql", ["-v", "ON_ERROR_STOP=1", "-q", "-f", Self.fixture], url: oldURL)
            try await placeGuessFailuresAroundNow(old)
            let before = try await rows(old)
            #expect(before.count >= 28)
            for (table, digest) in before where table != "cleanup_policy" {
                #expect(!digest.hasPrefix("0 "), "the fixture has rows in \(table)")
            }
            let plan = try await Migrator(client: old, groups: HeraldFleet.schema, logger: logger).migrate()
            #expect(plan.legacyVersions == Array(1...29).filter { $0 != 13 && $0 != 20 })
            #expect(plan.work.filter { $0.state == .adoptable }.count == 27)
            // What the old ledger ran is adopted; what came after it runs (runtime 0006's index, outside a transaction).
            let pending = plan.work.filter { $0.kind == .migration && $0.state == .pending }.map { "\($0.group)/\($0.path)" }
            let since = HeraldFleet.schema.flatMap { group in group.migrations.filter { $0.legacyVersion == nil }.map { "\(group.name)/\($0.file.path)" } }
            #expect(pending == since)
            #expect(since.contains("runtime/migrations/0006_apple_relay_addresses_updated_idx.sql"))
            // Tables of migrations written after the old ledger (herald-api's, sms 0012's) are new and empty.
            let after = try await rows(old)
            // sms 0011 keys the guessing count by number alone, sms 0012 gives the fraud guard's
            // pauses their grace budget: those tables' rows are reshaped (checked below). sms 0014
            // adds columns (delivery status, NULL; undelivered counts, 0), sms 0015 a verification's
            // channel (NULL), sms 0016 a code's tenant ('') and runtime 0008 an outbox row's routing key
            // (NULL): those rows are all there.
            let reshaped: Set<String> = ["sms_guess_failures", "sms_fraud_pauses"]
            let widened: Set<String> = ["sms_send_attempts", "sms_fraud_counts", "sms_verifications", "sms_codes", "event_outbox"]
            #expect(after.filter { before[$0.key] != nil && !reshaped.union(widened).contains($0.key) }
                    == before.filter { !reshaped.union(widened).contains($0.key) }, "every row is still there, unchanged")
            for table in widened {
                #expect(after[table]?.split(separator: " ").first == before[table]?.split(separator: " ").first, "\(table): every row is still there")
            }
            let counts = try await old.query("SELECT phone_number, failures, lockouts FROM herald.sms_guess_failures ORDER BY phone_number", logger: logger)
            var merged: [String] = []
            for try await (phone, failures, lockouts) in counts.decode((String, Int, Int).self) { merged.append("\(phone) \(failures) \(lockouts)") }
            // In its window: the fixture's 1 and 5, and +447700900456's other purpose (3 and a lock) added;
            // past it: +12025550147's other purpose (4 and a lock) and +33612345678's only row count nothing.
            #expect(merged == ["+12025550147 1 0", "+33612345678 0 0", "+447700900456 8 1"], "one row per number, of the failures still in their window")
            let pauses = try await old.query("""
                SELECT scope || ':' || key || ' ' || state || ' ' || grace_sent || ' ' || grace_verified FROM herald.sms_fraud_pauses ORDER BY scope, key
                """, logger: logger)
            var kept: [String] = []
            for try await pause in pauses.decode(String.self) { kept.append(pause) }
            #expect(kept.count == 2 && kept.allSatisfy { $0.hasSuffix(" 0 0") }, "the fixture's pauses, with an empty budget: \(kept)")
            // Issue 33: the ledger, the outbox and the attempt logs are partitioned by day, each old
            // row in the legacy partition (nothing copied), and the ledger still answers for an old message.
            for table in PartitionTests.tables {
                let legacy = try await old.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM herald.\(table)_legacy"), logger: logger)
                    .decode(Int.self).first { _ in true }
                #expect(legacy.map { "\($0) " }.map { after[table]?.hasPrefix($0) == true } == true && legacy != 0, "\(table): \(legacy ?? -1) rows in its legacy partition")
            }
            let finished = try #require(try await old.query("SELECT message_id FROM herald.job_runs WHERE status = 'completed' LIMIT 1", logger: logger)
                .decode(String.self).first { _ in true })
            #expect(try await JobLedger(client: old, logger: logger).claim(messageID: finished, jobType: "sms.verification.v1", queue: "sms",
                                                                          ownerKey: 1, token: "upgrade", leaseSeconds: 60) == .finished(status: .completed))
            let added = after.filter { before[$0.key] == nil }
            #expect(Set(added.keys) == ["api_keys", "verify_services", "verify_verifications", "verify_send_attempts", "sms_known_numbers", "sms_fallbacks",
                                           "email_otp_codes", "email_otp_verifications", "email_otp_guess_failures", "sms_fraud_baselines",
                                           "sms_fraud_let_through"])
            #expect(added.values.allSatisfy { $0.hasPrefix("0 ") }, "the tables the upgrade added are empty")
            let ledger = try await old.query("""
                SELECT to_regclass('public.herald_schema_migrations') IS NULL,
                       count(*) FILTER (WHERE how = 'adopted'), count(*) FILTER (WHERE kind = 'definition')
                FROM public.herald_schema_ledger
                """, logger: logger).decode((Bool, Int, Int).self).first { _ in true }
            #expect(ledger?.0 == true, "the old ledger is gone")
            #expect(ledger?.1 == 27)
            #expect(try await Migrator(client: old, groups: HeraldFleet.schema, logger: logger).migrate().work.isEmpty)

            try await withScratchDatabase("fresh") { freshURL, fresh in
                try await Migrator(client: fresh, groups: HeraldFleet.schema, logger: logger).migrate()
                // The upgrade's legacy partitions, which also cover today, are all it has more.
                let upgraded = try await schema(oldURL, without: ["_legacy"])
                let installed = try await schema(freshURL, without: ["_legacy", "_p\(PartitionTests.day(0))"])
                #expect(upgraded.contains("CREATE TABLE herald.sms_verifications"))
                if upgraded != installed {
                    let a = upgraded.split(separator: "\n"), b = installed.split(separator: "\n")
                    let onlyUpgraded = a.filter { !b.contains($0) }.prefix(20), onlyFresh = b.filter { !a.contains($0) }.prefix(20)
                    Issue.record("schemas differ:\n-- only upgraded:\n\(onlyUpgraded.joined(separator: "\n"))\n-- only fresh:\n\(onlyFresh.joined(separator: "\n"))")
                }
            }
        }
    }

    static let probe = SchemaGroup(name: "probe", files: [
        "migrations/0001_first.sql": "CREATE TABLE public.schema_probe_first (id int);",
        "functions/schema_probe.sql": "CREATE OR REPLACE FUNCTION public.schema_probe() RETURNS int LANGUAGE sql AS 'SELECT 1';",
    ])

    @Test func anEditedMigrationIsRefusedAndNothingIsApplied() async throws {
        let logger = TestEnvironment.logger("test.schema")
        try await withScratchDatabase("drift") { url, client in
            try await Migrator(client: client, groups: [RuntimeSchema.group, Self.probe], logger: logger).migrate()
            let edited = SchemaGroup(name: "probe", files: [
                "migrations/0001_first.sql": "CREATE TABLE public.schema_probe_first (id bigint);",
                "migrations/0002_second.sql": "CREATE TABLE public.schema_probe_second (id int);",
                "functions/schema_probe.sql": "CREATE OR REPLACE FUNCTION public.schema_probe() RETURNS int LANGUAGE sql AS 'SELECT 2';",
            ])
            let original = Self.probe.migrations[0].file.checksum, now = edited.migrations[0].file.checksum
            await #expect { try await Migrator(client: client, groups: [RuntimeSchema.group, edited], logger: logger).migrate() } throws: { error in
                "\(error)".contains("probe/migrations/0001_first.sql recorded \(original), file now \(now)")
            }
            let state = try await client.query("""
                SELECT to_regclass('public.schema_probe_second') IS NULL, public.schema_probe(),
                       (SELECT count(*) FROM public.herald_schema_ledger WHERE schema_group = 'probe')
                """, logger: logger).decode((Bool, Int, Int).self).first { _ in true }
            #expect(state?.0 == true, "the next migration did not run")
            #expect(state?.1 == 1, "the changed function was not applied either")
            #expect(state?.2 == 2)

            // The shipped binary on the same refusal: a file whose recorded checksum differs (as if
            // runtime's first migration had been edited after it ran) stops `heraldctl migrate`.
            var environment = ProcessInfo.processInfo.environment
            environment["HERALD_DATABASE_URL"] = url
            environment["HERALD_DATABASE_TLS"] = "disable"
            try await client.query("DELETE FROM public.herald_schema_ledger WHERE schema_group = 'probe'", logger: logger)
            try await client.query("UPDATE public.herald_schema_ledger SET checksum = 'edited' WHERE path = 'migrations/0001_platform.sql'", logger: logger)
            let refused = await #expect(throws: ChildProcessError.self) {
                _ = try await ChildProcess.run(TestEnvironment.binDir + "/heraldctl", ["migrate"], environment: environment)
            }
            let message = refused.map { "\($0)" } ?? ""
            #expect(message.contains("runtime/migrations/0001_platform.sql recorded edited, file now \(RuntimeSchema.group.migrations[0].file.checksum)"))
            #expect(message.contains("exited 1:"), "exit 1")
            let status = try await client.query("SELECT to_regclass('herald.sms_verifications') IS NULL", logger: logger).decode(Bool.self).first { _ in true }
            #expect(status == true, "no channel's migration ran")
        }
    }

    @Test func dryRunChangesNothingAndStatusTellsWhatRan() async throws {
        try await withScratchDatabase("dryrun") { url, client in
            var environment = ProcessInfo.processInfo.environment
            environment["HERALD_DATABASE_URL"] = url
            environment["HERALD_DATABASE_TLS"] = "disable"
            let heraldctl = TestEnvironment.binDir + "/heraldctl"
            let dry = try await ChildProcess.run(heraldctl, ["migrate", "--dry-run"], environment: environment)
            #expect(dry.contains("would apply runtime/migrations/0001_platform.sql"))
            #expect(dry.contains("would apply sms/functions/sms_prepare_batch.sql"))
            let untouched = try await client.query("SELECT to_regclass('public.herald_schema_ledger') IS NULL AND to_regnamespace('herald') IS NULL",
                                                    logger: TestEnvironment.logger("test.schema")).decode(Bool.self).first { _ in true }
            #expect(untouched == true, "a dry run creates nothing")

            _ = try await ChildProcess.run(heraldctl, ["migrate"], environment: environment)
            let json = try await ChildProcess.run(heraldctl, ["migrate", "status", "--output", "json"], environment: environment)
            let status = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let items = try #require(status["items"] as? [[String: Any]])
            #expect(items.count == HeraldFleet.schema.reduce(0) { $0 + $1.migrations.count + $1.definitions.count })
            #expect(items.allSatisfy { $0["state"] as? String == "applied" })
            let again = try await ChildProcess.run(heraldctl, ["migrate"], environment: environment)
            #expect(again.contains("schema up to date"))
        }
    }
}
