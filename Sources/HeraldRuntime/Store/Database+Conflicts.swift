import PostgresNIO

extension Database {
    /// Runs `operation` again, up to five times in all, when PostgreSQL answers with a
    /// serialization failure (40001), a deadlock (40P01) or the unique violation of a
    /// concurrent first insert (23505): a decision made in one statement is simply made anew.
    public static func retryingConflicts<T>(_ operation: () async throws -> T) async throws -> T {
        for attempt in 1... {
            do {
                return try await operation()
            } catch let error as PSQLError where attempt < 5 && ["40001", "40P01", "23505"].contains(error.serverInfo?[.sqlState] ?? "") {
                continue
            }
        }
        fatalError("unreachable")
    }
}
