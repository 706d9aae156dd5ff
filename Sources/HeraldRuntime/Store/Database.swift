import Logging
import NIOSSL
import PostgresNIO

/// Makes the shared `PostgresClient` from ``DatabaseConfiguration`` (refusing a TLS mode its
/// host may not use, see ``DatabaseConfiguration/validate()``). The client is a
/// `Service`: run it in the executable's `ServiceGroup` (or a task) before querying.
public enum Database {
    public static func makeClient(_ configuration: DatabaseConfiguration, logger: Logger) throws -> PostgresClient {
        try configuration.validate()
        let endpoint = try configuration.endpoint()
        let tls: PostgresClient.Configuration.TLS
        switch configuration.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try configuration.tlsConfiguration())
        case .require: tls = .require(try configuration.tlsConfiguration())
        }
        var config = PostgresClient.Configuration(
            host: endpoint.host, port: endpoint.port, username: endpoint.user,
            password: endpoint.password, database: endpoint.database, tls: tls
        )
        config.options.maximumConnections = configuration.maxConnections
        config.options.connectTimeout = .seconds(Int64(configuration.connectTimeoutSeconds))
        config.options.connectionIdleTimeout = .seconds(Int64(configuration.idleTimeoutSeconds))
        config.options.keepAliveBehavior = configuration.keepAliveSeconds == 0 ? nil : .init(frequency: .seconds(Int64(configuration.keepAliveSeconds)))
        return PostgresClient(configuration: config, backgroundLogger: logger)
    }
}
