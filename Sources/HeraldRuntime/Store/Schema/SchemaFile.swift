/// One `.sql` file of a schema group, as embedded in the binary: its path below the module's
/// `SQL/` folder, its text and the SHA-256 of that text (what the ledger records).
public struct SchemaFile: Sendable, Hashable {
    public let path: String
    public let text: String

    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }

    /// Lower-case hex SHA-256 of the file's bytes.
    public var checksum: String { SHA256Hex.of(text) }

    /// The file name without its folder.
    public var name: String { String(path.split(separator: "/").last ?? Substring(path)) }

    /// The statements to send, one at a time.
    public var statements: [String] { SQLScript.statements(text) }
}
