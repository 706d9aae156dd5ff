import AMQP
import Foundation
import Logging
import PostgresNIO
import Prometheus
import ServiceLifecycle

/// Builds and runs one worker executable: configuration, logs, metrics, PostgreSQL, the
/// broker connection, the presence lock, the event relay, the job runner and the
/// operations endpoint, in one `ServiceGroup` that drains on SIGTERM/SIGINT.
public enum WorkerApp {
    /// Runs until SIGTERM/SIGINT; returns the process exit code.
    public static func main<Worker: HeraldWorker>(_ worker: Worker.Type, configPath: String?) async -> ExitCode {
        let kind = Worker.kind
        return await Bootstrap.main("herald-\(kind.rawValue)", logLabel: "herald.\(kind.rawValue)", stopped: "worker stopped on an error") {
            let configuration = try HeraldConfiguration.loadChecked(path: configPath, sections: [Worker.section])
            return (configuration, try Worker.handler(configuration: configuration))
        } run: { configuration, handler, observability, logger in
            try await run(kind: kind, handler: handler, configuration: configuration, observability: observability, logger: logger)
        }
    }

    public static func run<Handler: JobHandler>(kind: JobKind, handler: Handler, configuration: HeraldConfiguration, observability: Observability, logger: Logger) async throws {
        let worker = try WorkerServices(
            kind: kind, handler: handler, configuration: configuration,
            connectionName: "herald-\(kind.rawValue)@\(ProcessInfo.processInfo.hostName)", logger: logger)
        // The exporter first of all: the last to stop, it exports the spans of the drain.
        var services: [any Service] = observability.tracing.map { [$0] } ?? []
        if configuration.http.enabled {
            let port = configuration.http.port == 0 ? kind.defaultOpsPort : configuration.http.port
            // First to start, last to stop (the group stops in reverse order): /readyz
            // answers "draining" while the runner drains.
            services.append(OpsServer(host: configuration.http.host, port: port, health: worker.health, registry: observability.registry, logger: logger))
        }
        // Last, so the first to hear the shutdown: exits 70 if the shutdown outlasts its bound.
        let bound = ShutdownBound(bound: worker.shutdownBound, logger: logger)
        let group = worker.serviceGroup(first: services, last: [bound], signals: [.sigterm, .sigint], logger: logger)
        logger.info("starting", metadata: ["kind": "\(kind.rawValue)", "queue": "\(HeraldTopology(configuration.amqp, configuration.runner).workQueue(kind))"])
        try await group.run()
        logger.info("stopped")
    }
}
