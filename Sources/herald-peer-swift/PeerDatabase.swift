import Foundation
import NIOSSL
import PostgresNIO

/// The pool's configuration from the Go peer's `PG_URL` (pgx's form:
/// `postgres://user[:password]@host:port/database?sslmode=…&sslrootcert=…`). `sslmode`
/// `verify-full` checks the chain (against `sslrootcert` when given) and the host name, as pgx
/// does; `require` encrypts only; `disable` (or none) connects in the clear. The pool is set as
/// herald-sms's is.
func peerDatabase(_ url: String, maximumConnections: Int) throws -> PostgresClient.Configuration {
    guard let parts = URLComponents(string: url), let host = parts.host, let user = parts.user else {
        throw PeerFailure("PG_URL: expected postgres://user@host:port/database")
    }
    let query = Dictionary((parts.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { _, last in last }
    let tls: PostgresClient.Configuration.TLS
    switch query["sslmode"] ?? "disable" {
    case "disable":
        tls = .disable
    case "require":
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        tls = .require(configuration)
    case "verify-full":
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let root = query["sslrootcert"], !root.isEmpty { configuration.trustRoots = .file(root) }
        configuration.certificateVerification = .fullVerification
        tls = .require(configuration)
    case let mode:
        throw PeerFailure("PG_URL: sslmode \(mode) is not one of disable, require, verify-full")
    }
    var configuration = PostgresClient.Configuration(host: host, port: parts.port ?? 5432, username: user, password: parts.password,
                                                     database: String(parts.path.dropFirst()), tls: tls)
    configuration.options.maximumConnections = maximumConnections
    // herald-sms's pool settings (database.idle_timeout_seconds 10, keep_alive_seconds 0): postgres-nio keeps each
    // query's cancelled idle and keep-alive timers, and their memory, until they were due (docs/benchmarks.md).
    configuration.options.connectionIdleTimeout = .seconds(10)
    configuration.options.keepAliveBehavior = nil
    return configuration
}
