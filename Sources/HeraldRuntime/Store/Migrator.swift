import Logging
import PostgresNIO

/// Applies `migrations` (the runtime's and every channel's) in order, each in its own transaction, under an advisory lock
/// so several `heraldctl migrate` (or a Kubernetes Job racing a rollout) are safe.
public struct Migrator: Sendable {
    public let client: PostgresClient
    public let migrations: [Migration]
    public let logger: Logger
    static let lockKey: Int64 = 0x4845_5241_4C44 // "HERALD"

    /// Two migrations of one version are a programming error (two channels claimed it).
    public init(client: PostgresClient, migrations: [Migration], logger: Logger) {
        precondition(Set(migrations.map(\.version)).count == migrations.count, "two migrations share a version")
        self.client = client
        self.migrations = migrations
        self.logger = logger
    }

    /// Returns the versions applied by this call.
    @discardableResult
    public func migrate() async throws -> [Int] {
        try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
            do {
                let applied = try await apply(on: connection)
                try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                throw error
            }
        }
    }

    private func apply(on connection: PostgresConnection) async throws -> [Int] {
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS public.herald_schema_migrations (
                version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        var done = Set<Int>()
        for try await version in try await connection.query("SELECT version FROM public.herald_schema_migrations", logger: logger).decode(Int.self) {
            done.insert(version)
        }
        var applied: [Int] = []
        // Pending versions in ascending order. A gap (a version reserved by work not merged
        // yet) is fine: that version is applied whenever it appears, after the later ones.
        for migration in migrations.sorted(by: { $0.version < $1.version }) where !done.contains(migration.version) {
            try await connection.query("BEGIN", logger: logger)
            do {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO public.herald_schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger)
                try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            applied.append(migration.version)
        }
        return applied
    }

    /// The latest applied version, or 0.
    public func currentVersion() async throws -> Int {
        let rows = try await client.query(
            "SELECT coalesce(max(version), 0) FROM public.herald_schema_migrations", logger: logger)
        for try await version in rows.decode(Int.self) { return version }
        return 0
    }
}
