import Foundation
import NIOSSL
import PostgresNIO

/// The pool's configuration from the Go peer's `PG_URL` (pgx's form:
/// `postgres://user[:password]@host:port/database?sslmode=…&sslrootcert=…`), `sslmode` as pgx
/// reads it: `verify-full` checks the chain (against `sslrootcert` when given) and the host name;
/// `verify-ca` the chain only; `require` encrypts without checking (pgx checks the chain when
/// `sslrootcert` is given: verify-ca); `prefer` (pgx's default, also with no `sslmode`) encrypts
/// when the server can, unchecked; `disable` connects in the clear. The pool is set as
/// herald-sms's is.
func poolConfiguration(pgURL url: String, maximumConnections: Int) throws -> PostgresClient.Configuration {
    guard let parts = URLComponents(string: url), let host = parts.host, let user = parts.user else {
        throw PeerFailure("PG_URL: expected postgres://user@host:port/database")
    }
    let query = Dictionary((parts.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { _, last in last }
    let root = query["sslrootcert"].flatMap { $0.isEmpty ? nil : $0 }
    /// A client configuration checking `verification` against `sslrootcert` (or the system's roots).
    func checked(_ verification: CertificateVerification) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let root { configuration.trustRoots = .file(root) }
        configuration.certificateVerification = verification
        return configuration
    }
    let tls: PostgresClient.Configuration.TLS
    switch query["sslmode"] ?? "prefer" {
    case "disable": tls = .disable
    case "prefer": tls = .prefer(checked(.none))
    case "require": tls = .require(checked(root == nil ? .none : .noHostnameVerification))
    case "verify-ca": tls = .require(checked(.noHostnameVerification))
    case "verify-full": tls = .require(checked(.fullVerification))
    case let mode:
        throw PeerFailure("PG_URL: sslmode \(mode) is not one of disable, prefer, require, verify-ca, verify-full")
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
