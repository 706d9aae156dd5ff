import Foundation
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
        let target = try target(configuration, logger: logger)
        let tls: PostgresClient.Configuration.TLS
        switch configuration.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try configuration.tlsConfiguration())
        case .require: tls = .require(try configuration.tlsConfiguration())
        }
        var config = PostgresClient.Configuration(
            host: target.host, port: target.port, username: endpoint.user,
            password: endpoint.password, database: endpoint.database, tls: tls
        )
        config.options.tlsServerName = target.tlsServerName
        config.options.maximumConnections = configuration.maxConnections
        config.options.connectTimeout = .seconds(Int64(configuration.connectTimeoutSeconds))
        config.options.connectionIdleTimeout = .seconds(Int64(configuration.idleTimeoutSeconds))
        config.options.keepAliveBehavior = configuration.keepAliveSeconds == 0 ? nil : .init(frequency: .seconds(Int64(configuration.keepAliveSeconds)))
        return PostgresClient(configuration: config, backgroundLogger: logger)
    }

    /// A single connection's configuration (the presence lock's, the relay's probe) to `host`,
    /// with the pool's credentials, TLS and connect timeout.
    static func connection(_ configuration: DatabaseConfiguration, host: String, port: Int, tlsServerName: String?) throws -> PostgresConnection.Configuration {
        let endpoint = try configuration.endpoint()
        let tls: PostgresConnection.Configuration.TLS = switch configuration.tls {
        case .disable: .disable
        case .prefer: .prefer(try .init(configuration: configuration.tlsConfiguration()))
        case .require: .require(try .init(configuration: configuration.tlsConfiguration()))
        }
        var config = PostgresConnection.Configuration(host: host, port: port, username: endpoint.user, password: endpoint.password,
                                                      database: endpoint.database, tls: tls)
        config.options.tlsServerName = tlsServerName
        config.options.connectTimeout = .seconds(Int64(configuration.connectTimeoutSeconds))
        return config
    }

    /// Where a connection goes: the one host of ``DatabaseConfiguration/url``, or, when it
    /// names several, the process's ``PrimaryRelay`` to their primary on loopback, with TLS
    /// checked against the first host's name (every host's certificate must be valid for it;
    /// ``DatabaseConfiguration/validate()`` refuses an address there).
    static func target(_ configuration: DatabaseConfiguration, logger: Logger) throws -> (host: String, port: Int, tlsServerName: String?) {
        let endpoint = try configuration.endpoint()
        guard endpoint.nodes.count > 1 else { return (endpoint.host, endpoint.port, nil) }
        let relay = try PrimaryRelay.shared(configuration, nodes: endpoint.nodes, logger: logger)
        return (relay.address, relay.port, configuration.tls == .disable ? nil : endpoint.host)
    }
}
