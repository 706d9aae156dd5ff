import Foundation

/// `database.*`: the PostgreSQL connection pool.
public struct DatabaseConfiguration: Sendable {
    public var url: String = "postgres://herald@127.0.0.1:55432/herald"
    public var maxConnections: Int = 16
    public var connectTimeoutSeconds: Int = 5
    /// A database operation (lease, statement, transaction) taking longer counts as the
    /// database being unreachable: the job is held and tried again.
    public var operationTimeoutSeconds: Int = 15
    /// `disable`, `prefer` or `require`.
    public var tls: TLSMode = .prefer

    public enum TLSMode: String, Sendable, CaseIterable { case disable, prefer, require }

    public init(url: String = "postgres://herald@127.0.0.1:55432/herald", maxConnections: Int = 16) {
        self.url = url
        self.maxConnections = maxConnections
    }

    init(source: ConfigSource) throws {
        self.url = try source.string("database.url", default: url, secret: true)
        self.maxConnections = try source.int("database.max_connections", default: maxConnections, range: 1...1000)
        self.connectTimeoutSeconds = try source.int("database.connect_timeout_seconds", default: connectTimeoutSeconds, range: 1...300)
        self.operationTimeoutSeconds = try source.int("database.operation_timeout_seconds", default: operationTimeoutSeconds, range: 1...3_600)
        self.tls = try source.choice("database.tls", default: TLSMode.prefer)
        _ = try endpoint()
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
        return Endpoint(
            host: host,
            port: components.port ?? 5432,
            user: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database
        )
    }
}
