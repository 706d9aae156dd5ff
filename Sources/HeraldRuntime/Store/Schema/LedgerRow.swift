import Foundation

/// One row of `public.herald_schema_ledger` (Sources/HeraldRuntime/SQL/ledger.sql).
public struct LedgerRow: Sendable, Equatable {
    public var group: String
    public var kind: MigrationPlan.Item.Kind
    public var path: String
    public var checksum: String
    /// `applied` (run by this ledger) or `adopted` (run by the old one, recorded here).
    public var adopted: Bool
    public var appliedAt: Date?

    public init(group: String, kind: MigrationPlan.Item.Kind, path: String, checksum: String, adopted: Bool = false, appliedAt: Date? = nil) {
        self.group = group
        self.kind = kind
        self.path = path
        self.checksum = checksum
        self.adopted = adopted
        self.appliedAt = appliedAt
    }
}
