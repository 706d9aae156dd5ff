import Foundation

/// `database.*`: the PostgreSQL connection pool.
public struct DatabaseConfiguration: Sendable {
    public var url: String = "postgres://herald@127.0.0.1:55432/herald"
    public var maxConnections: Int = 16
    public var connectTimeoutSeconds: Int = 5
    /// A database operation (lease, statement, transaction) taking longer counts as the
    /// database being unreachable: the job is held and tried again.
    public var operationTimeoutSeconds: Int = 15
    /// How the connection is protected; `require` by default. `disable` and `prefer` are
    /// refused for any host but loopback (see ``validate()``).
    public var tls: TLSMode = .require
    /// PEM file of the CA(s) that sign the server's certificate (a private CA); empty: the
    /// system's trust store.
    public var tlsCAFile: String = ""

    /// `database.tls`.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Clear text.
        case disable
        /// TLS (verified as with `require`) when the server offers it, clear text when it does not.
        case prefer
        /// TLS or no connection; the server's certificate chain and host name are verified
        /// (libpq's `verify-full`). There is no mode that encrypts without verifying.
        case require
    }

    public init(url: String = "postgres://herald@127.0.0.1:55432/herald", maxConnections: Int = 16) {
        self.url = url
        self.maxConnections = maxConnections
    }

    init(source: ConfigSource) throws {
        self.url = try source.string("database.url", default: url, secret: true)
        self.maxConnections = try source.int("database.max_connections", default: maxConnections, range: 1...1000)
        self.connectTimeoutSeconds = try source.int("database.connect_timeout_seconds", default: connectTimeoutSeconds, range: 1...300)
        self.operationTimeoutSeconds = try source.int("database.operation_timeout_seconds", default: operationTimeoutSeconds, range: 1...3_600)
        self.tls = try source.choice("database.tls", default: tls)
        self.tlsCAFile = try source.string("database.tls_ca_file", default: tlsCAFile)
        try validate()
    }

    /// The URL parses and the TLS keys fit it (``checkTLS(host:)``); the worker refuses to
    /// start otherwise, with the key named.
    public func validate() throws {
        try checkTLS(host: try endpoint().host)
    }

    /// Host, port, user, password and database parsed from ``url``.
    public struct Endpoint: Sendable {
        public var host: String
        public var port: Int
        public var user: String
        public var password: String?
        public var database: String
    }

    public func endpoint() throws -> Endpoint {
        guard let components = URLComponents(string: url),
              components.scheme == "postgres" || components.scheme == "postgresql",
              let host = components.host, !host.isEmpty
        else {
            throw ConfigError(key: "database.url", reason: "must look like postgres://user[:password]@host[:port]/database")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard let user = components.user, !user.isEmpty, !database.isEmpty else {
            throw ConfigError(key: "database.url", reason: "needs a user and a database name")
        }
        if let query = components.query, !query.isEmpty {
            throw ConfigError(key: "database.url", reason: "takes no query parameters (such as sslmode): set database.tls and database.tls_ca_file")
        }
        return Endpoint(
            host: host,
            port: components.port ?? 5432,
            user: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database
        )
    }
}
