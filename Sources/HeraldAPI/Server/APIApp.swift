import AMQP
import Foundation
import HTTPTypes
import HeraldAPIStore
import HeraldAppleCheck
import HeraldClient
import HeraldPhoneCheck
import HeraldRuntime
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import PostgresNIO
import Prometheus
import ServiceLifecycle
import UnixSignals

/// herald-api: configuration, logs, metrics, PostgreSQL, the broker connection, the operations
/// endpoint and the HTTP server, in one `ServiceGroup` that drains on SIGTERM/SIGINT (the server
/// stops taking connections and finishes the requests in flight before the broker and the
/// database close).
public enum APIApp {
    public static let sections: [any ConfigurationSection.Type] = [APIConfiguration.self, SMSConfiguration.self, AppleConfiguration.self]

    public static func main(configPath: String?) async -> ExitCode {
        await Bootstrap.main("herald-api", logLabel: "herald.api", stopped: "herald-api stopped on an error") {
            let configuration = try HeraldConfiguration.loadChecked(path: configPath, sections: sections)
            _ = try configuration.secrets.keyRing()
            if configuration.api.tlsEnabled { _ = try TLSFiles(configuration.api).load() }
            return (configuration, ())
        } run: { configuration, _, observability, logger in
            try await run(configuration: configuration, observability: observability, logger: logger)
        }
    }

    public static func run(configuration: HeraldConfiguration, observability: Observability, logger: Logger) async throws {
        let health = HealthState()
        let database = try Database.makeClient(configuration.database, logger: logger)
        let topology = HeraldTopology(configuration.amqp, configuration.runner)
        let repliesQueue = topology.repliesPrefix + RandomID.hex()
        let connection = AMQPConnection(configuration: try configuration.amqp.connectionConfiguration(name: "herald-api@\(ProcessInfo.processInfo.hostName)"),
                                        topology: DecisionReplies.topology(queue: repliesQueue), logger: logger)
        let replies = DecisionReplies(connection: connection, queue: repliesQueue, logger: logger)
        // The jobs the starts write to the outbox, published after their commit.
        let jobsRelay = EventRelay(client: database, connection: connection, exchange: topology.jobsExchange,
                                   operationTimeout: .seconds(configuration.database.operationTimeoutSeconds), persistent: true, logger: logger)
        health.setBrokerProbe { connection.isConnected }
        // herald-api takes no presence lock (it consumes nothing): ready once the broker and
        // the database are, until it drains.
        health.presenceHeld = true
        let hasher = SecretHasher(keyRing: try configuration.secrets.keyRing())
        let keys = KeyCache(store: APIKeyStore(client: database, hasher: hasher), logger: logger)
        let metrics = APIMetrics()
        let dependencies = APIDependencies(
            configuration: configuration, database: database,
            publisher: JobPublisher(client: HeraldClient(connection: connection, namespace: configuration.amqp.namespace, tracer: HeraldTracing.tracer),
                                    timeout: .milliseconds(configuration.api.publishTimeoutMilliseconds), metrics: metrics),
            starts: JobStarts(database: database, connection: connection, replies: replies, relay: jobsRelay, jobsExchange: topology.jobsExchange,
                              wait: .milliseconds(configuration.api.decisionWaitMilliseconds), metrics: metrics),
            verification: try HeraldVerification(database: database, secrets: configuration.secrets),
            accounts: HeraldAccounts(database: database, logger: logger, topology: topology),
            apple: HeraldAppleSignIn(configuration: configuration.apple, logger: logger),
            keys: keys, verify: VerifyStore(client: database), metrics: metrics)
        let api = configuration.api
        let receipts = configuration.sms.receipts
        if receipts.enabled, !receipts.kannelSecret.isEmpty, receipts.kannelAllowedSources.isEmpty {
            // Kannel fills in a report's type outside its signature: unlisted, only this host may report (issue 46).
            logger.notice("Kannel's delivery reports are taken from this host only: list Kannel's addresses in sms.receipts.kannel_allowed_sources when it runs elsewhere")
        }
        let server: HTTPServerBuilder
        // Stopped in reverse: the server first, then the replies and the relay (its last batch), the broker, the database.
        var services: [any Service] = [database, DatabaseProbe(client: database, health: health, logger: logger), AMQPConnectionService(connection),
                                       jobsRelay, replies, keys]
        if api.tlsEnabled {
            let certificates = TLSFiles(api)
            let reloader = CertificateReloader(files: certificates, current: try certificates.load(), logger: logger)
            server = try .tls(.http1(), tlsConfiguration: reloader.serverConfiguration())
            services.append(reloader)
        } else {
            server = .http1()
            services.append(HangupWithoutTLS(logger: logger))
        }
        if configuration.http.enabled {
            let port = configuration.http.port == 0 ? APIConfiguration.defaultOpsPort : configuration.http.port
            services.insert(OpsServer(host: configuration.http.host, port: port, health: health, registry: observability.registry, logger: logger), at: 0)
        }
        // The exporter first of all: the last to stop, it exports the spans of the drain.
        if let tracing = observability.tracing { services.insert(tracing, at: 0) }
        let app = Application(
            router: try APIRouter.make(dependencies), server: server,
            configuration: .init(address: .hostname(api.host, port: api.port), serverName: nil),
            onServerRunning: { _ in logger.info("listening", metadata: ["host": "\(api.host)", "port": "\(api.port)", "tls": "\(api.tlsEnabled)"]) },
            logger: logger)
        services.append(app)
        // Stopped before the server: /readyz answers "draining" while the requests in flight finish.
        services.append(DrainSignal(health: health))
        let drain = Duration.seconds(configuration.runner.drainTimeoutSeconds)
        services.append(ShutdownBound(bound: drain + .seconds(15), logger: logger))
        var group = ServiceGroupConfiguration(services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = drain + .seconds(10)
        try await ServiceGroup(configuration: group).run()
        logger.info("stopped")
    }
}

/// Marks the process draining at the start of a graceful shutdown.
struct DrainSignal: Service {
    let health: HealthState

    func run() async throws {
        try? await gracefulShutdown()
        health.draining = true
    }
}
