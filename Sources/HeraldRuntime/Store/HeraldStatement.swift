import Logging
import PostgresNIO

/// A statement of a module's `SQL/queries/` folder, run as a named prepared statement: its type
/// is generated from the file's header by the EmbedFiles plugin (its parameters as properties,
/// its columns as `Row`), and `scripts/check-statements.py` fails `make test` when PostgreSQL
/// reads the file's types otherwise. docs/architecture.md, "Statements".
///
/// postgres-nio prepares it once per connection (`Parse`) and then only binds and executes it
/// (issue 18: planning alone was half of the claim's time). It remembers a failed preparation
/// for the connection's life, so a connection whose run failed in a way the preparation can have
/// failed (an unknown relation, function or column: a schema not yet migrated; a cancelled
/// statement or a lock not granted; no memory) is closed, and the pool opens a fresh one.
/// Conflicts (40001, 40P01, 23505) and a function's own refusals keep it.
public protocol HeraldStatement: PostgresPreparedStatement where Row: Sendable {}

extension HeraldStatement {
    /// Runs it on a connection of the pool; its rows.
    @discardableResult
    public func rows(on client: PostgresClient, logger: Logger) async throws -> [Row] {
        try await client.withConnection { connection in try await rows(on: connection, logger: logger) }
    }

    /// Runs it on `connection` (in the caller's transaction); its rows.
    @discardableResult
    public func rows(on connection: PostgresConnection, logger: Logger) async throws -> [Row] {
        do {
            var rows: [Row] = []
            for try await row in try await connection.execute(self, logger: logger) { rows.append(row) }
            return rows
        } catch {
            if StatementFailure.mayHaveFailedPreparing(error) {
                logger.warning("closing a database connection whose prepared statement failed",
                               metadata: ["statement": "\(Self.name)", "sqlstate": "\(Database.sqlState(of: error) ?? "none")"])
                try? await connection.close()
            }
            throw error
        }
    }

    /// Its first row, nil when it gave none.
    public func first(on connection: PostgresConnection, logger: Logger) async throws -> Row? {
        try await rows(on: connection, logger: logger).first
    }

    /// Its first row, nil when it gave none.
    public func first(on client: PostgresClient, logger: Logger) async throws -> Row? {
        try await rows(on: client, logger: logger).first
    }
}

enum StatementFailure {
    /// SQLSTATE classes a `Parse` can answer with: 42 (an unknown relation, function or column),
    /// 57 (cancelled, shutting down), 55 (a lock not granted), 53 (out of resources).
    static func mayHaveFailedPreparing(_ error: any Error) -> Bool {
        guard let state = Database.sqlState(of: error) else { return false }
        return ["42", "57", "55", "53"].contains(String(state.prefix(2)))
    }
}

/// A statement's parameter that does not fit its column's type.
public struct StatementValueError: Error, CustomStringConvertible {
    public var parameter: String
    public var value: Int
    public var description: String { "\(parameter): \(value) is out of its column's range" }
}

/// Conversions the generated statements use.
public enum StatementValue {
    /// `value` as the narrower integer its parameter is, or an error naming the parameter.
    public static func narrow<T: FixedWidthInteger>(_ value: Int, _ parameter: String, as: T.Type) throws -> T {
        guard let narrowed = T(exactly: value) else { throw StatementValueError(parameter: parameter, value: value) }
        return narrowed
    }
}
