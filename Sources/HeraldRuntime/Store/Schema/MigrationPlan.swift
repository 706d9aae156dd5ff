import Foundation

/// What the ledger says of every SQL file, and so what a migrate would do.
public struct MigrationPlan: Sendable {
    /// One file of one group, and its state in this database.
    public struct Item: Sendable, Codable, Equatable {
        public enum Kind: String, Sendable, Codable { case migration, definition }
        public enum State: String, Sendable, Codable {
            /// Run by this ledger, text unchanged.
            case applied
            /// Recorded as run by the old ledger (`public.herald_schema_migrations`), text unchanged.
            case adopted
            /// Not run yet: a migrate runs it.
            case pending
            /// Ran by the old ledger; a migrate records it without running it again.
            case adoptable
            /// A definition whose text differs from the one applied: a migrate applies it again.
            case changed
            /// An applied migration whose text changed: a migrate refuses to run.
            case drifted
            /// Recorded as applied, but no file here has that path.
            case missing
            /// Pending, but numbered below a migration already applied in its group.
            case outOfOrder = "out_of_order"
        }
        public var group: String
        public var kind: Kind
        public var path: String
        public var version: Int?
        public var state: State
        public var checksum: String
        public var recordedChecksum: String?
        public var appliedAt: Date?
    }

    public var items: [Item]
    /// Versions found in the old ledger (empty once adopted, or on a new database).
    public var legacyVersions: [Int]
    /// Old-ledger versions that no file claims.
    public var unknownLegacyVersions: [Int]

    /// What a migrate would run or record, in order.
    public var work: [Item] { items.filter { [.pending, .adoptable, .changed].contains($0.state) } }

    /// Throws the first reason not to migrate, if any.
    public func check() throws(MigrationError) {
        let drifted = items.filter { $0.state == .drifted }
        if !drifted.isEmpty { throw .drift(drifted) }
        let missing = items.filter { $0.state == .missing && $0.kind == .migration }
        if !missing.isEmpty { throw .missing(missing) }
        let outOfOrder = items.filter { $0.state == .outOfOrder }
        if !outOfOrder.isEmpty { throw .outOfOrder(outOfOrder) }
        if !unknownLegacyVersions.isEmpty { throw .unknownLegacy(unknownLegacyVersions) }
    }
}
