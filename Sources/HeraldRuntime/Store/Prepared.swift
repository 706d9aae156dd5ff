import Logging
import PostgresNIO

/// The text of a statement on a job's path: a caseless enum per statement, whose `sql` is a
/// constant with positional binds (`$1`, `$2`, …).
public protocol StatementText {
    static var sql: String { get }
}

/// A statement on a job's path, run as a named prepared statement: postgres-nio prepares it once
/// per connection (`Parse`) and then only binds and executes it, so PostgreSQL no longer parses
/// and plans its text for every group of jobs (issue 18: planning alone was half of the claim's
/// time, and a sixth of PostgreSQL's CPU per SMS job went to parsing and planning).
///
/// PostgreSQL plans a prepared statement per execution for its first five runs, then keeps a
/// generic plan when that costs no more; every statement here takes arrays, whose generic plan
/// is the one their custom plans already were. A migration that changes what a statement reads
/// invalidates its plan, and the next execution plans it again.
///
/// postgres-nio remembers a failed preparation for the connection's life: every later run of
/// that statement on it fails the same way. So a connection whose run failed in a way the
/// preparation can have failed (an unknown relation, function or column: a schema not yet
/// migrated; a cancelled statement or a lock not granted; no memory) is closed, and the pool
/// opens a fresh one. Conflicts (40001, 40P01, 23505) and a function's own refusals keep it.
public struct Prepared<Text: StatementText>: PostgresPreparedStatement {
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

    /// Runs it on a connection of the pool; its rows.
    @discardableResult
    public func rows(on client: PostgresClient, logger: Logger) async throws -> [PostgresRow] {
        try await client.withConnection { connection in try await rows(on: connection, logger: logger) }
    }

    /// Runs it on `connection` (in the caller's transaction); its rows.
    @discardableResult
    public func rows(on connection: PostgresConnection, logger: Logger) async throws -> [PostgresRow] {
        do {
            var rows: [PostgresRow] = []
            for try await row in try await connection.execute(self, logger: logger) { rows.append(row) }
            return rows
        } catch {
            if Self.mayHaveFailedPreparing(error) {
                logger.warning("closing a database connection whose prepared statement failed",
                               metadata: ["statement": "\(Self.name)", "sqlstate": "\(Database.sqlState(of: error) ?? "none")"])
                try? await connection.close()
            }
            throw error
        }
    }

    /// SQLSTATE classes a `Parse` can answer with: 42 (an unknown relation, function or column),
    /// 57 (cancelled, shutting down), 55 (a lock not granted), 53 (out of resources).
    static func mayHaveFailedPreparing(_ error: any Error) -> Bool {
        guard let state = Database.sqlState(of: error) else { return false }
        return ["42", "57", "55", "53"].contains(String(state.prefix(2)))
    }
}
