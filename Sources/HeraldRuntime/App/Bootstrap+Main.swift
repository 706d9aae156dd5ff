import Foundation
import Logging
import Prometheus

extension Bootstrap {
    /// An executable's life, the same for every worker and herald-api. `load` reads and checks
    /// the configuration and builds what must exist before anything starts; a failure is one
    /// line on stderr, `<name>: <error>` (the key named), and ``ExitCode/configuration`` (78).
    /// Then logs and metrics, and `run` until it returns (``ExitCode/ok``) or throws (logged
    /// critical as `stopped`, ``ExitCode/failure``).
    public static func main<Loaded>(
        _ name: String, logLabel: String, stopped: Logger.Message,
        load: () throws -> (HeraldConfiguration, Loaded),
        run: (HeraldConfiguration, Loaded, PrometheusCollectorRegistry, Logger) async throws -> Void
    ) async -> ExitCode {
        let configuration: HeraldConfiguration
        let loaded: Loaded
        do {
            (configuration, loaded) = try load()
        } catch {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            return .configuration
        }
        logging(configuration.log)
        let registry = metrics()
        let logger = Logger(label: logLabel)
        do {
            try await run(configuration, loaded, registry, logger)
            return .ok
        } catch {
            logger.critical(stopped, metadata: ["error": "\(error)"])
            return .failure
        }
    }
}
