/// Why `heraldctl migrate` refused to run. Nothing was applied when one of these is thrown.
public enum MigrationError: Error, Sendable, CustomStringConvertible {
    /// The SQL files break the layout rules (a misnamed file, a gap in the numbers).
    case layout([String])
    /// Applied migrations whose text changed since: a frozen file was edited.
    case drift([MigrationPlan.Item])
    /// Applied migrations the binary has no file for (a newer Herald migrated this database).
    case missing([MigrationPlan.Item])
    /// Pending migrations numbered below one already applied in their group.
    case outOfOrder([MigrationPlan.Item])
    /// Versions in the old ledger that no file here claims.
    case unknownLegacy([Int])
    /// A statement of a file failed; its transaction was rolled back (SQL text, never data).
    case statementFailed(path: String, sqlState: String, message: String, statement: String)

    public var description: String {
        switch self {
        case .layout(let problems):
            return "the SQL files break the layout: " + problems.joined(separator: "; ")
        case .drift(let items):
            return "refusing to migrate: applied migrations changed since they ran (a versioned migration is frozen; add a new one instead): "
                + items.map { "\($0.group)/\($0.path) recorded \($0.recordedChecksum ?? "?"), file now \($0.checksum)" }.joined(separator: "; ")
        case .missing(let items):
            return "refusing to migrate: the database has applied migrations this binary does not know (is it older than the one that migrated?): "
                + items.map { "\($0.group)/\($0.path)" }.joined(separator: ", ")
        case .outOfOrder(let items):
            return "refusing to migrate: pending migrations are numbered below ones already applied in their group: "
                + items.map { "\($0.group)/\($0.path)" }.joined(separator: ", ")
        case .unknownLegacy(let versions):
            return "refusing to migrate: public.herald_schema_migrations holds versions no migration file claims: "
                + versions.map(String.init).joined(separator: ", ")
        case .statementFailed(let path, let sqlState, let message, let statement):
            return "\(path) failed (SQLSTATE \(sqlState)): \(message), in: \(statement)"
        }
    }
}
