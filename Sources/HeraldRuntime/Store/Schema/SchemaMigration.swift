import Foundation

/// A versioned migration: `migrations/NNNN_name.sql`. Frozen once it is on main: the ledger
/// keeps its checksum, and `heraldctl migrate` refuses to run when the text changed.
public struct SchemaMigration: Sendable, Hashable {
    public let version: Int
    public let name: String
    public let file: SchemaFile
    /// The version it had in the old single-sequence ledger (`public.herald_schema_migrations`),
    /// from its first line `-- herald:legacy-version N`: a database migrated by the old code
    /// adopts it instead of running it again.
    public let legacyVersion: Int?
    /// False when a line of its header is `-- herald:no-transaction`: its statements run one by
    /// one outside a transaction (`CREATE INDEX CONCURRENTLY` cannot run inside one), and its
    /// ledger row is written after the last. Such a file must be safe to run again from the
    /// start (`IF NOT EXISTS`, or a `DROP … IF EXISTS` first): a failure leaves what it did.
    public let transactional: Bool

    static let legacyMarker = "-- herald:legacy-version "
    static let noTransactionMarker = "-- herald:no-transaction"

    /// Nil when the file name is not `NNNN_name.sql` (four digits, lower-case name).
    init?(file: SchemaFile) {
        let name = file.name
        guard name.hasSuffix(".sql"), name.count > 9 else { return nil }
        let stem = name.dropLast(4)
        let digits = stem.prefix(4)
        let rest = stem.dropFirst(4)
        guard digits.allSatisfy(\.isASCII), let version = Int(digits), digits.allSatisfy(\.isNumber),
              rest.first == "_", rest.count > 1,
              rest.dropFirst().allSatisfy({ ($0.isLowercase && $0.isASCII) || $0.isNumber || $0 == "_" })
        else { return nil }
        self.version = version
        self.name = String(rest.dropFirst())
        self.file = file
        let firstLine = file.text.prefix { $0 != "\n" }
        legacyVersion = firstLine.hasPrefix(Self.legacyMarker) ? Int(firstLine.dropFirst(Self.legacyMarker.count)) : nil
        // The header: the comment lines before the first statement.
        let header = file.text.split(separator: "\n").prefix { $0.hasPrefix("--") || $0.allSatisfy(\.isWhitespace) }
        transactional = !header.contains { $0.trimmingCharacters(in: .whitespaces) == Self.noTransactionMarker }
    }
}
