import Foundation
import HeraldClient
@testable import HeraldRuntime
import HeraldWorkers
import Testing

/// The SQL files' layout and the migrator's plan, with no database: statement splitting as psql
/// reads a file, the groups' numbering, and what the ledger makes of drift, gaps and the old ledger.
@Suite struct SchemaLayoutTests {
    @Test func statementsSplitAtTopLevelSemicolonsOnly() {
        let sql = """
            -- a comment; with a semicolon
            CREATE TABLE t (a text DEFAULT 'x;y', "b;c" int); /* block; /* nested; */ still */
            CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $fn$ BEGIN RETURN 1; END $fn$;
            DO $$ BEGIN PERFORM 1; END $$;
            SELECT E'it\\'s; fine', $1, 'it''s; fine';
            SELECT CASE WHEN a THEN 'x' ELSE'y\\' END, a$b$c FROM t
            """
        let statements = SQLScript.statements(sql)
        #expect(statements.count == 5)
        #expect(statements[0].hasSuffix("\"b;c\" int);"))
        #expect(statements[1].hasPrefix("/* block;") && statements[1].hasSuffix("END $fn$;"))
        #expect(statements[2] == "DO $$ BEGIN PERFORM 1; END $$;")
        #expect(statements[3].hasSuffix("'it''s; fine';"))
        #expect(statements[4].hasSuffix("a$b$c FROM t"), "ELSE'…' is no E string, a$b$c no dollar quote")
        #expect(SQLScript.statements("-- only a comment\n/* and another */\n").isEmpty)
    }

    @Test func everyGroupKeepsTheLayout() throws {
        let groups = HeraldFleet.schema
        #expect(groups.map(\.name) == ["runtime", "sms", "email", "push", "cleanup", "apple", "api"])
        for group in groups {
            try group.validate()
            #expect(!group.migrations.isEmpty, "\(group.name) has its migrations")
            for migration in group.migrations {
                // Its first lines say what it does (a migration whose work moved to functions/ is only comments).
                #expect(migration.file.text.split(separator: "\n").prefix(2).contains { $0.hasPrefix("-- ") && !$0.hasPrefix("-- herald:") },
                        "\(migration.file.path) says what it did")
                // But a helper only migrations call, frozen with the migration that creates it (a
                // definition file could change under the migrations that ran it), marked so.
                let own = migration.file.text.replacingOccurrences(of: "-- herald:migration-helper\nCREATE FUNCTION", with: "")
                #expect(own.range(of: "CREATE (OR REPLACE )?FUNCTION", options: .regularExpression) == nil,
                        "\(group.name): functions live in functions/, not in \(migration.file.path)")
            }
        }
        // Every old-ledger version (1-29 but 13 and 20) is claimed by exactly one file.
        let legacy = groups.flatMap(\.migrations).compactMap(\.legacyVersion).sorted()
        #expect(legacy == Array(1...29).filter { $0 != 13 && $0 != 20 })
        // Each function is defined in one file only.
        var defined: [String: String] = [:]
        for group in groups {
            for file in group.definitions {
                for statement in file.statements {
                    guard let match = statement.firstMatch(of: /CREATE OR REPLACE FUNCTION ([a-z_.]+)\(/) else { continue }
                    let name = String(match.1)
                    #expect(defined[name] == nil || defined[name] == file.path, "\(name) defined twice")
                    defined[name] = file.path
                }
            }
        }
        #expect(defined.count >= 21)
    }

    /// What the binary carries is what is on disk: every `.sql` file below each module's `SQL/`
    /// folder, with the same text (a file the plugin dropped would never be migrated).
    @Test func theEmbeddedFilesAreTheFilesOnDisk() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let modules = ["runtime": "HeraldRuntime", "sms": "HeraldPhone", "email": "HeraldEmail", "push": "HeraldPush",
                       "cleanup": "HeraldCleanup", "apple": "HeraldApple", "api": "HeraldAPIStore"]
        for group in HeraldFleet.schema {
            let root = sources.appendingPathComponent(try #require(modules[group.name])).appendingPathComponent("SQL")
            var onDisk: [String: String] = [:]
            let walker = try #require(FileManager.default.enumerator(atPath: root.path))
            for case let path as String in walker where path.hasSuffix(".sql") {
                onDisk[path] = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            }
            var embedded = Dictionary(uniqueKeysWithValues: (group.migrations.map(\.file) + group.definitions + group.statements).map { ($0.path, $0.text) })
            if group.name == "runtime" {
                for path in ["ledger.sql", "retire-legacy-ledger.sql", "ownership.sql", "partition-upkeep.sql"] { embedded[path] = onDisk[path] }
                #expect(RuntimeSchema.ownership.text == onDisk["ownership.sql"])
                #expect(RuntimeSchema.partitionUpkeep.text == onDisk["partition-upkeep.sql"])
            }
            #expect(Set(embedded.keys) == Set(onDisk.keys), "\(group.name)")
            for (path, text) in onDisk { #expect(embedded[path] == text, "\(group.name)/\(path) differs from the binary's") }
        }
    }

    @Test func aGapOrAStrayFileBreaksTheLayout() {
        let gap = SchemaGroup(name: "g", files: ["migrations/0001_a.sql": "SELECT 1;", "migrations/0003_c.sql": "SELECT 1;"])
        #expect(throws: MigrationError.self) { try gap.validate() }
        let stray = SchemaGroup(name: "g", files: ["migrations/0001_a.sql": "SELECT 1;", "migrations/1_b.sql": "SELECT 1;"])
        #expect(throws: MigrationError.self) { try stray.validate() }
        #expect(SchemaGroup(name: "g", files: ["migrations/0001_a.sql": "-- herald:legacy-version 7\nSELECT 1;"]).migrations.first?.legacyVersion == 7)
    }

    @Test func aMigrationRunsInATransactionUnlessItsHeaderSaysNot() {
        let files = ["migrations/0001_a.sql": "-- plain\nCREATE INDEX a ON t (x);",
                     "migrations/0002_b.sql": "-- an index\n-- herald:no-transaction\nCREATE INDEX CONCURRENTLY b ON t (x);",
                     "migrations/0003_c.sql": "SELECT 1;\n-- herald:no-transaction\n"]
        #expect(SchemaGroup(name: "g", files: files).migrations.map(\.transactional) == [true, false, true], "only in the header")
        let outside = HeraldFleet.schema.flatMap { group in group.migrations.filter { !$0.transactional }.map { "\(group.name)/\($0.file.path)" } }
        #expect(outside == ["runtime/migrations/0006_apple_relay_addresses_updated_idx.sql", "sms/migrations/0016_sms_codes_per_tenant.sql",
                            "sms/migrations/0018_sms_fraud_marks_by_scope.sql", "sms/migrations/0021_sms_fraud_marks_scope_indexes_dropped.sql",
                            "email/migrations/0008_email_codes_per_tenant.sql"])
    }

    static let group = SchemaGroup(name: "g", files: [
        "migrations/0001_a.sql": "-- herald:legacy-version 1\nCREATE TABLE a ();",
        "migrations/0002_b.sql": "-- herald:legacy-version 5\nCREATE TABLE b ();",
        "migrations/0003_c.sql": "CREATE TABLE c ();",
        "functions/f.sql": "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1';",
    ])

    @Test func aNewDatabaseRunsEverything() throws {
        let plan = MigrationPlan(groups: [Self.group], ledger: [], legacyVersions: [])
        try plan.check()
        #expect(plan.work.map(\.path) == ["migrations/0001_a.sql", "migrations/0002_b.sql", "migrations/0003_c.sql", "functions/f.sql"])
        #expect(plan.work.map(\.state) == [.pending, .pending, .pending, .changed])
    }

    @Test func anEditedMigrationIsDriftAndNothingRuns() {
        let a = Self.group.migrations[0].file
        let ledger = [LedgerRow(group: "g", kind: .migration, path: a.path, checksum: "0000")]
        let plan = MigrationPlan(groups: [Self.group], ledger: ledger, legacyVersions: [])
        #expect(plan.items.first?.state == .drifted)
        #expect { try plan.check() } throws: { error in
            "\(error)".contains("g/migrations/0001_a.sql recorded 0000, file now \(a.checksum)")
        }
    }

    @Test func aChangedFunctionIsAppliedAgainAndAnUnchangedOneIsNot() throws {
        let rows = (Self.group.migrations.map(\.file) + Self.group.definitions).map {
            LedgerRow(group: "g", kind: $0.path.hasPrefix("functions") ? .definition : .migration, path: $0.path, checksum: $0.checksum)
        }
        #expect(MigrationPlan(groups: [Self.group], ledger: rows, legacyVersions: []).work.isEmpty)
        var changed = rows
        changed[3].checksum = "old"
        let plan = MigrationPlan(groups: [Self.group], ledger: changed, legacyVersions: [])
        try plan.check()
        #expect(plan.work.map(\.path) == ["functions/f.sql"])
    }

    @Test func aPendingMigrationBelowAnAppliedOneIsRefused() {
        let c = Self.group.migrations[2].file
        let plan = MigrationPlan(groups: [Self.group], ledger: [LedgerRow(group: "g", kind: .migration, path: c.path, checksum: c.checksum)], legacyVersions: [])
        #expect(plan.items.filter { $0.state == .outOfOrder }.map(\.path) == ["migrations/0001_a.sql", "migrations/0002_b.sql"])
        #expect(throws: MigrationError.self) { try plan.check() }
    }

    @Test func theOldLedgerIsAdoptedFileByFile() throws {
        let plan = MigrationPlan(groups: [Self.group], ledger: [], legacyVersions: [1, 5])
        try plan.check()
        #expect(plan.work.map(\.state) == [.adoptable, .adoptable, .pending, .changed])
        let unknown = MigrationPlan(groups: [Self.group], ledger: [], legacyVersions: [1, 5, 30])
        #expect(unknown.unknownLegacyVersions == [30])
        #expect(throws: MigrationError.self) { try unknown.check() }
    }

    @Test func aMigrationThisBinaryDoesNotKnowIsRefused() {
        let plan = MigrationPlan(groups: [Self.group], ledger: [LedgerRow(group: "g", kind: .migration, path: "migrations/0004_d.sql", checksum: "x")], legacyVersions: [])
        #expect(plan.items.last?.state == .missing)
        #expect(throws: MigrationError.self) { try plan.check() }
    }
}
