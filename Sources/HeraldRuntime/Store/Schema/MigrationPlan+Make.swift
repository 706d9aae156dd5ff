extension MigrationPlan {
    /// The plan for `groups` (in apply order) against what the ledger holds and, for a database
    /// migrated by the old code, the versions of the old ledger. Pure: no database.
    public init(groups: [SchemaGroup], ledger: [LedgerRow], legacyVersions: [Int]) {
        var items: [Item] = []
        let legacy = Set(legacyVersions)
        var claimed = Set<Int>()
        for group in groups {
            let recorded = Dictionary(ledger.filter { $0.group == group.name }.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            var highestApplied = 0
            var groupItems: [Item] = []
            for migration in group.migrations {
                var item = Item(group: group.name, kind: .migration, path: migration.file.path, version: migration.version,
                                state: .pending, checksum: migration.file.checksum)
                if let legacyVersion = migration.legacyVersion { claimed.insert(legacyVersion) }
                if let row = recorded[migration.file.path] {
                    item.recordedChecksum = row.checksum
                    item.appliedAt = row.appliedAt
                    item.state = row.checksum != item.checksum ? .drifted : row.adopted ? .adopted : .applied
                    highestApplied = max(highestApplied, migration.version)
                } else if let legacyVersion = migration.legacyVersion, legacy.contains(legacyVersion) {
                    item.state = .adoptable
                    highestApplied = max(highestApplied, migration.version)
                }
                groupItems.append(item)
            }
            for index in groupItems.indices where groupItems[index].state == .pending && (groupItems[index].version ?? 0) < highestApplied {
                groupItems[index].state = .outOfOrder
            }
            for file in group.definitions {
                var item = Item(group: group.name, kind: .definition, path: file.path, state: .changed, checksum: file.checksum)
                if let row = recorded[file.path] {
                    item.recordedChecksum = row.checksum
                    item.appliedAt = row.appliedAt
                    if row.checksum == item.checksum { item.state = .applied }
                }
                groupItems.append(item)
            }
            let known = Set(groupItems.map(\.path))
            for row in recorded.values.sorted(by: { $0.path < $1.path }) where !known.contains(row.path) {
                groupItems.append(Item(group: group.name, kind: row.kind, path: row.path, state: .missing,
                                       checksum: row.checksum, recordedChecksum: row.checksum, appliedAt: row.appliedAt))
            }
            items += groupItems
        }
        let names = Set(groups.map(\.name))
        for row in ledger where !names.contains(row.group) {
            items.append(Item(group: row.group, kind: row.kind, path: row.path, state: .missing,
                              checksum: row.checksum, recordedChecksum: row.checksum, appliedAt: row.appliedAt))
        }
        self.init(items: items, legacyVersions: legacyVersions.sorted(),
                  unknownLegacyVersions: legacy.subtracting(claimed).sorted())
    }
}
