/// The runtime's schema group (`Sources/HeraldRuntime/SQL`): the ledger, the event and dev
/// outboxes, the accounts and cleanup policy, the database roles, and the files the migrator
/// itself runs (the ledger's table, the old ledger's retirement, the partition upkeep, the ownership finalizer).
public enum RuntimeSchema {
    static let ledgerPath = "ledger.sql"
    static let retirePath = "retire-legacy-ledger.sql"
    static let ownershipPath = "ownership.sql"
    static let partitionUpkeepPath = "partition-upkeep.sql"

    public static let group = SchemaGroup(name: "runtime", files: EmbeddedSQL.files, extras: [ledgerPath, retirePath, ownershipPath, partitionUpkeepPath])

    static var ledger: SchemaFile { file(ledgerPath) }
    static var retireLegacyLedger: SchemaFile { file(retirePath) }
    /// Hands everything in schema `herald` to `herald_migrate` (run after every migrate that did anything).
    static var ownership: SchemaFile { file(ownershipPath) }
    /// Creates the coming days' partitions of the day-partitioned tables (run on every migrate).
    static var partitionUpkeep: SchemaFile { file(partitionUpkeepPath) }

    static func file(_ path: String) -> SchemaFile {
        guard let text = EmbeddedSQL.files[path] else { preconditionFailure("Sources/HeraldRuntime/SQL/\(path) is not embedded") }
        return SchemaFile(path: path, text: text)
    }
}
