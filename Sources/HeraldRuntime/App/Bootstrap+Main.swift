import Foundation
import Logging
import Prometheus
import ServiceLifecycle

extension Bootstrap {
    /// An executable's life, the same for every worker and herald-api. `load` reads and checks
    /// the configuration and builds what must exist before anything starts; a failure is one
    /// line on stderr, `<name>: <error>` (the key named), and ``ExitCode/configuration`` (78).
    /// Then logs, metrics and traces (``HeraldTracing``; `name` is the service name), and `run`
    /// until it returns (``ExitCode/ok``) or throws (logged critical as `stopped`, ``ExitCode/failure``).
    public static func main<Loaded>(
        _ name: String, logLabel: String, stopped: Logger.Message,
        load: () throws -> (HeraldConfiguration, Loaded),
        run: (HeraldConfiguration, Loaded, Observability, Logger) async throws -> Void
    ) async -> ExitCode {
        let configuration: HeraldConfiguration
        let loaded: Loaded
        do {
            (configuration, loaded) = try load()
        } catch {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            return .configuration
        }
        logging(configuration.log, traceIDs: configuration.tracing.enabled)
        let tracing: (any Service)?
        do {
            tracing = try HeraldTracing.bootstrap(configuration.tracing, serviceName: name, logger: Logger(label: "herald.tracing"))
        } catch {
            FileHandle.standardError.write(Data("\(name): tracing: \(error)\n".utf8))
            return .configuration
        }
        let observability = Observability(registry: metrics(), tracing: tracing)
        let logger = Logger(label: logLabel)
        do {
            try await run(configuration, loaded, observability, logger)
            return .ok
        } catch {
            logger.critical(stopped, metadata: ["error": "\(error)"])
            return .failure
        }
    }
}
