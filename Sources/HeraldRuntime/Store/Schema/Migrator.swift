import Foundation
import Logging
import PostgresNIO

/// Applies the schema groups' SQL files and keeps `public.herald_schema_ledger`: each group's
/// pending versioned migrations in order, then its definitions whose text changed, each file in
/// its own transaction, under an advisory lock so several `heraldctl migrate` (or a Kubernetes
/// Job racing a rollout) are safe. Refuses to run, applying nothing, when an applied migration's
/// text changed, when the database knows migrations this binary does not, or when a pending one
/// is numbered below an applied one. A database migrated by the old code (versions in
/// `public.herald_schema_migrations`) adopts the files that stand for those versions.
public struct Migrator: Sendable {
    public let client: PostgresClient
    public let groups: [SchemaGroup]
    public let logger: Logger
    static let lockKey: Int64 = 0x4845_5241_4C44 // "HERALD"

    public init(client: PostgresClient, groups: [SchemaGroup], logger: Logger) {
        self.client = client
        self.groups = groups
        self.logger = logger
    }

    /// What the ledger says of every file; reads only, takes no lock.
    public func plan() async throws -> MigrationPlan {
        for group in groups { try group.validate() }
        return try await client.withConnection { try await plan(on: $0) }
    }

    /// Applies what is due and returns the plan it carried out (with `dryRun`, only returns it:
    /// a dry run takes no lock and writes nothing).
    @discardableResult
    public func migrate(dryRun: Bool = false) async throws -> MigrationPlan {
        for group in groups { try group.validate() }
        if dryRun {
            let planned = try await client.withConnection { try await self.plan(on: $0) }
            try planned.check()
            return planned
        }
        return try await client.withConnection { connection in
            try await lock(on: connection)
            do {
                let plan = try await plan(on: connection)
                try plan.check()
                try await apply(plan, on: connection)
                try await MigrateUnlock(key: Int(Self.lockKey)).rows(on: connection, logger: logger)
                return plan
            } catch {
                _ = try? await MigrateUnlock(key: Int(Self.lockKey)).rows(on: connection, logger: logger)
                throw error
            }
        }
    }

    /// The advisory lock, polled rather than waited for: a session blocked in
    /// `pg_advisory_lock` holds a snapshot the whole time, and `CREATE INDEX CONCURRENTLY` (a
    /// `herald:no-transaction` migration) in the session that holds the lock waits for every
    /// older snapshot of the database to end: the two would deadlock.
    private func lock(on connection: PostgresConnection) async throws {
        while true {
            if try await MigrateLockTry(key: Int(Self.lockKey)).first(on: connection, logger: logger)?.taken == true { return }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    private func plan(on connection: PostgresConnection) async throws -> MigrationPlan {
        let ledgers = try await MigrateLedgers().first(on: connection, logger: logger)
        var ledger: [LedgerRow] = []
        if ledgers?.hasLedger == true {
            ledger = try await MigrateLedgerRead().rows(on: connection, logger: logger).map {
                LedgerRow(group: $0.group, kind: MigrationPlan.Item.Kind(rawValue: $0.kind) ?? .migration, path: $0.path,
                          checksum: $0.checksum, adopted: $0.adopted, appliedAt: $0.appliedAt)
            }
        }
        var legacy: [Int] = []
        if ledgers?.hasLegacy == true {
            for try await version in try await connection.query("SELECT version FROM public.herald_schema_migrations", logger: logger).decode(Int.self) {
                legacy.append(version)
            }
        }
        return MigrationPlan(groups: groups, ledger: ledger, legacyVersions: legacy)
    }

    private func apply(_ plan: MigrationPlan, on connection: PostgresConnection) async throws {
        let work = plan.work
        if !work.isEmpty || !plan.legacyVersions.isEmpty {
            try await run(RuntimeSchema.ledger, on: connection)
        }
        if !plan.legacyVersions.isEmpty {
            let adoptable = work.filter { $0.state == .adoptable }
            try await transaction(on: connection) {
                for item in adoptable { try await record(item, how: "adopted", on: connection) }
                try await run(RuntimeSchema.retireLegacyLedger, on: connection)
            }
            logger.info("adopted the old ledger", metadata: [
                "versions": "\(plan.legacyVersions.map(String.init).joined(separator: ","))", "files": "\(adoptable.count)"])
        }
        let files = filesByKey
        for item in work where item.state != .adoptable {
            guard let (file, transactional) = files["\(item.group)/\(item.path)"] else { continue }
            if transactional {
                try await transaction(on: connection) {
                    try await run(file, group: item.group, on: connection)
                    try await record(item, how: "applied", on: connection)
                }
            } else {
                try await run(file, group: item.group, on: connection)
                try await record(item, how: "applied", on: connection)
            }
            logger.info("applied", metadata: ["group": "\(item.group)", "file": "\(item.path)", "transaction": "\(transactional)"])
        }
        // The partition upkeep and the ownership finalizer run on every migrate (each changes only
        // what is not so already), so that one that failed or was cut short last time is made good.
        try await transaction(on: connection) { try await run(RuntimeSchema.partitionUpkeep, on: connection) }
        try await transaction(on: connection) { try await run(RuntimeSchema.ownership, on: connection) }
    }

    /// Every file by `group/path`, and whether it runs in a transaction (every definition does;
    /// a migration unless its header says `herald:no-transaction`).
    private var filesByKey: [String: (SchemaFile, transactional: Bool)] {
        var files: [String: (SchemaFile, transactional: Bool)] = [:]
        for group in groups {
            for migration in group.migrations { files["\(group.name)/\(migration.file.path)"] = (migration.file, migration.transactional) }
            for definition in group.definitions { files["\(group.name)/\(definition.path)"] = (definition, true) }
        }
        return files
    }

    private func record(_ item: MigrationPlan.Item, how: String, on connection: PostgresConnection) async throws {
        try await MigrateLedgerRecord(group: item.group, kind: item.kind.rawValue, path: item.path, version: item.version,
                                      checksum: item.checksum, how: how).rows(on: connection, logger: logger)
    }

    private func run(_ file: SchemaFile, group: String = "runtime", on connection: PostgresConnection) async throws {
        for statement in file.statements {
            do {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            } catch let error as PSQLError {
                throw MigrationError.statementFailed(
                    path: "\(group)/\(file.path)", sqlState: error.serverInfo?[.sqlState] ?? "?",
                    message: error.serverInfo?[.message] ?? "\(error.code)", statement: String(statement.prefix(200)))
            }
        }
    }

    private func transaction(on connection: PostgresConnection, _ body: () async throws -> Void) async throws {
        try await connection.query("BEGIN", logger: logger)
        do {
            try await body()
            try await connection.query("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
