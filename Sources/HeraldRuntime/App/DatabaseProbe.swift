import Logging
import PostgresNIO
import ServiceLifecycle

/// Pings PostgreSQL every `interval` so `/readyz` is right even when no job runs.
public struct DatabaseProbe: Service {
    let client: PostgresClient
    let health: HealthState
    let interval: Duration
    let logger: Logger

    public init(client: PostgresClient, health: HealthState, interval: Duration = .seconds(2), logger: Logger) {
        self.client = client
        self.health = health
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            // A pool lease waits (rather than fails) while the database is away: bound it.
            let client = self.client, logger = self.logger
            let up = try? await withDeadline(.seconds(2)) { try await Ping().rows(on: client, logger: logger) }
            health.databaseUp = up != nil
            try? await Task.sleep(for: interval)
        }
    }
}
