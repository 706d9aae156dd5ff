import PostgresNIO

extension Database {
    /// Runs `operation` again, up to five times in all, when PostgreSQL answers with a
    /// serialization failure (40001), a deadlock (40P01) or the unique violation of a
    /// concurrent first insert (23505): a decision made in one statement is simply made anew.
    /// The answer counts whether it comes alone or inside `withTransaction`'s error (the
    /// transaction body's or its commit's).
    public static func retryingConflicts<T>(_ operation: () async throws -> T) async throws -> T {
        for attempt in 1... {
            do {
                return try await operation()
            } catch where attempt < 5 && ["40001", "40P01", "23505"].contains(sqlState(of: error) ?? "") {
                continue
            }
        }
        fatalError("unreachable")
    }

    /// The SQLSTATE PostgreSQL answered with, unwrapped from a transaction's error.
    static func sqlState(of error: any Error) -> String? {
        if let inner = (error as? PostgresTransactionError)?.failure { return sqlState(of: inner) }
        return (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}
