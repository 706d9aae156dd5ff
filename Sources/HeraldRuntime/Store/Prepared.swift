import Logging
import PostgresNIO

/// The text of a statement on a job's path: a caseless enum per statement, whose `sql` is a
/// constant with positional binds (`$1`, `$2`, …).
public protocol StatementText {
    static var sql: String { get }
}

/// A statement still written in Swift (`StatementText`), run as a ``HeraldStatement`` whose rows
/// are `PostgresRow`s: the modules whose statements are not yet in `SQL/queries/` files.
public struct Prepared<Text: StatementText>: HeraldStatement {
    public typealias Row = PostgresRow
    public static var name: String { String(reflecting: Text.self) }
    public static var sql: String { Text.sql }

    private let bindings: PostgresBindings

    /// `binds` in the order of `$1`, `$2`, …
    public init(_ binds: any PostgresThrowingDynamicTypeEncodable & Sendable...) throws {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds { try bindings.append(bind) }
        self.bindings = bindings
    }

    public init(bindings: PostgresBindings) {
        self.bindings = bindings
    }

    public func makeBindings() -> PostgresBindings { bindings }
    public func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
