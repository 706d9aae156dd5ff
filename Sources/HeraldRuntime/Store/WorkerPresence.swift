import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle

/// Holds a session-level advisory lock on this process's owner key for as long as the
/// process lives. The lock vanishes with the process (or its database session), which
/// tells ``JobLedger`` that the jobs this process claimed may be taken over.
public final class WorkerPresence: Service, Sendable {
    /// Random per process; stored as `job_runs.owner_key` of the jobs it claims.
    public let ownerKey: Int64
    private let configuration: DatabaseConfiguration
    private let logger: Logger
    private let health: HealthState

    public init(configuration: DatabaseConfiguration, health: HealthState, logger: Logger) {
        var key = Int64.random(in: 1...Int64.max)
        if key == Migrator.lockKey { key += 1 }
        self.ownerKey = key
        self.configuration = configuration
        self.health = health
        self.logger = logger
    }

    public func run() async throws {
        var delay: Duration = .milliseconds(100)
        let step = Duration.seconds(max(configuration.connectTimeoutSeconds, 2))
        let ping = Duration.seconds(max(configuration.operationTimeoutSeconds, configuration.connectTimeoutSeconds, 2))
        while !Task.isCancelledOrShuttingDown {
            var open: PostgresConnection?
            do {
                let config = try connectionConfiguration()
                let logger = self.logger
                let connection = try await withDeadline(step) {
                    try await PostgresConnection.connect(configuration: config, id: 1, logger: logger)
                }
                open = connection
                let key = ownerKey
                _ = try await withDeadline(step) { try await PresenceLock(key: Int(key)).rows(on: connection, logger: logger) }
                health.presenceHeld = true
                delay = .milliseconds(100)
                // Hold it; a failed or unanswered ping means the session (and the lock) is gone.
                while !Task.isCancelledOrShuttingDown {
                    try? await Task.sleep(for: .seconds(1))
                    if Task.isCancelledOrShuttingDown { break }
                    // A slow answer is not a lost lock (the session still holds it), and closing
                    // on impatience would release it and let another worker take over jobs
                    // still running here: the ping waits as long as any database operation.
                    _ = try await withDeadline(ping) { try await Ping().rows(on: connection, logger: logger) }
                }
            } catch {
                logger.warning("worker presence lock lost; reconnecting", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            }
            health.presenceHeld = false
            if let connection = open {
                // Bounded: closing a connection that died with its server can hang.
                // In a task of its own: at shutdown the caller is cancelled, the close must still run.
                _ = try? await Task { try await withDeadline(.seconds(2)) { try await connection.close() } }.value
            }
            if Task.isCancelledOrShuttingDown { return }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(2))
        }
    }

    private func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let target = try Database.target(configuration, logger: logger)
        return try Database.connection(configuration, host: target.host, port: target.port, tlsServerName: target.tlsServerName)
    }
}
