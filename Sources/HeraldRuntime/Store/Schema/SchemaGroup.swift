/// One module's schema: its versioned migrations (`SQL/migrations/NNNN_name.sql`, applied once,
/// in order, frozen) and its definitions (`SQL/functions/*.sql`: the current text of each
/// function and its trigger, `CREATE OR REPLACE`, applied again whenever the text changes, in
/// file-name order). The runtime's group comes first, then each channel's (`HeraldWorker.schema`).
/// Its statements (`SQL/queries/*.sql`, ``HeraldStatement``) are the module's, not the schema's:
/// the migrator leaves them, and they are kept here only so that the layout is whole.
public struct SchemaGroup: Sendable {
    /// The group's name in the ledger: `runtime`, `sms`, `email`, `push`, `cleanup`, `apple`.
    public let name: String
    public let migrations: [SchemaMigration]
    public let definitions: [SchemaFile]
    public let statements: [SchemaFile]
    /// Files that are none of these: a misplaced or misnamed file, reported by ``validate()``.
    let strays: [String]

    /// `files` is a module's `EmbeddedSQL.files` (path below `SQL/` → text).
    public init(name: String, files: [String: String], extras: Set<String> = []) {
        self.name = name
        var migrations: [SchemaMigration] = []
        var definitions: [SchemaFile] = []
        var statements: [SchemaFile] = []
        var strays: [String] = []
        for (path, text) in files.sorted(by: { $0.key < $1.key }) where !extras.contains(path) {
            let file = SchemaFile(path: path, text: text)
            if path.hasPrefix("migrations/"), !path.dropFirst(11).contains("/"), let migration = SchemaMigration(file: file) {
                migrations.append(migration)
            } else if path.hasPrefix("functions/"), path.hasSuffix(".sql"), !path.dropFirst(10).contains("/") {
                definitions.append(file)
            } else if path.hasPrefix("queries/"), path.hasSuffix(".sql"), !path.dropFirst(8).contains("/") {
                statements.append(file)
            } else {
                strays.append(path)
            }
        }
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.definitions = definitions
        self.statements = statements
        self.strays = strays
    }

    /// The layout rules: migrations numbered 1, 2, 3 … with no gap or repeat, no stray file.
    public func validate() throws(MigrationError) {
        var problems = strays.map { "\(name): \($0) is none of migrations/NNNN_name.sql, functions/NAME.sql, queries/NAME.sql" }
        for (index, migration) in migrations.enumerated() where migration.version != index + 1 {
            problems.append("\(name): \(migration.file.path) should be number \(index + 1) (versions run 1, 2, 3 … with no gap or repeat)")
            break
        }
        if !problems.isEmpty { throw .layout(problems) }
    }
}
