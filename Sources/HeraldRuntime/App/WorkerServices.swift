import AMQP
import Foundation
import Logging
import PostgresNIO
import Prometheus
import ServiceLifecycle
import UnixSignals

/// Everything one worker process runs, wired together: its PostgreSQL pool, the database
/// probe, the presence lock, the broker connection, the event relays and the job runner,
/// in the order a `ServiceGroup` should start them (it stops them in reverse).
public struct WorkerServices<Handler: JobHandler>: Sendable {
    public let health: HealthState
    public let database: PostgresClient
    public let connection: AMQPConnection
    public let presence: WorkerPresence
    public let relay: EventRelay
    /// Relays the outbox rows addressed to the jobs exchange: jobs Herald enqueues itself in
    /// the transaction that decides them (the recover_email notice of a used change link).
    public let jobRelay: EventRelay
    public let runner: JobRunner<Handler>
    public let probe: DatabaseProbe
    let drainTimeout: Duration

    public init(kind: JobKind, handler: Handler, configuration: HeraldConfiguration, connectionName: String, logger: Logger) throws {
        self.drainTimeout = .seconds(configuration.runner.drainTimeoutSeconds)
        let health = HealthState()
        let topology = HeraldTopology(configuration.amqp, configuration.runner)
        let database = try Database.makeClient(configuration.database, logger: logger)
        let connection = AMQPConnection(
            configuration: try configuration.amqp.connectionConfiguration(name: connectionName),
            topology: topology.topology(for: kind, waits: handler.waitSeconds),
            logger: logger)
        health.setBrokerProbe { connection.isConnected }
        let presence = WorkerPresence(configuration: configuration.database, health: health, logger: logger)
        let relay = EventRelay(client: database, connection: connection, exchange: topology.eventsExchange,
                               operationTimeout: .seconds(configuration.database.operationTimeoutSeconds), logger: logger)
        self.health = health
        self.database = database
        self.connection = connection
        self.presence = presence
        self.relay = relay
        self.jobRelay = EventRelay(client: database, connection: connection, exchange: topology.jobsExchange,
                                   operationTimeout: .seconds(configuration.database.operationTimeoutSeconds), persistent: true, logger: logger)
        self.probe = DatabaseProbe(client: database, health: health, logger: logger)
        self.runner = JobRunner(
            kind: kind, handler: handler,
            dependencies: .init(connection: connection, database: database, health: health, ownerKey: presence.ownerKey, relay: relay),
            topology: topology, configuration: configuration.runner, prefetch: configuration.amqp.prefetch,
            operationTimeout: .seconds(configuration.database.operationTimeoutSeconds), logger: logger)
    }

    /// The group that runs ``services`` after `first` (e.g. the operations endpoint) and before
    /// `last` (stopped first, e.g. ``ShutdownBound``). The
    /// graceful shutdown gets the drain timeout plus 10 s for the rest; the services still
    /// running then are cancelled. No cancellation limit here: swift-service-lifecycle's ends
    /// the process with a trap, and an in-process group (tests, benchmark) must not end its
    /// host. The worker executables bound the whole shutdown with ``ShutdownBound``.
    public func serviceGroup(first: [any Service] = [], last: [any Service] = [], signals: [UnixSignal] = [], logger: Logger) -> ServiceGroup {
        var configuration = ServiceGroupConfiguration(
            services: (first + services + last).map { .init(service: $0) },
            gracefulShutdownSignals: signals,
            logger: logger)
        configuration.maximumGracefulShutdownDuration = drainTimeout + .seconds(10)
        return ServiceGroup(configuration: configuration)
    }

    /// The executables' whole shutdown: the graceful part, then 5 s for the cancelled services.
    public var shutdownBound: Duration { drainTimeout + .seconds(15) }

    /// In start order. The runner is last, so it is the first to stop and drain while the
    /// connection, relay and database it needs are still up.
    public var services: [any Service] {
        [database, probe, presence, AMQPConnectionService(connection), relay, jobRelay, runner]
    }
}
