import Foundation

/// `database.*`: the PostgreSQL connection pool.
public struct DatabaseConfiguration: Sendable {
    public var url: String = "postgres://herald@127.0.0.1:55432/herald"
    public var maxConnections: Int = 16
    public var connectTimeoutSeconds: Int = 5
    /// A connection of the pool idle this long is closed, so no job leases a connection that
    /// sat idle longer. postgres-nio starts this timer each time a connection goes back to the
    /// pool, and a timer the next lease cancels keeps its memory until it would have fired: a
    /// worker holds one per release for this long. With postgres-nio's 60 s, a herald-sms
    /// process grew to 145 MB in a minute at 1,050 SMS jobs/s; with 10 s it stays at 72 MB
    /// (docs/benchmarks-journal.md).
    public var idleTimeoutSeconds: Int = 10
    /// An idle connection sends `SELECT 1` after this long; 0: never. It must be below
    /// ``idleTimeoutSeconds`` to ever run, and its timer lingers as the idle one does, so it is
    /// off by default: the idle timeout already closes a connection before it gets stale.
    public var keepAliveSeconds: Int = 0
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
        self.idleTimeoutSeconds = try source.int("database.idle_timeout_seconds", default: idleTimeoutSeconds, range: 1...86_400)
        self.keepAliveSeconds = try source.int("database.keep_alive_seconds", default: keepAliveSeconds, range: 0...86_400)
        self.operationTimeoutSeconds = try source.int("database.operation_timeout_seconds", default: operationTimeoutSeconds, range: 1...3_600)
        self.tls = try source.choice("database.tls", default: tls)
        self.tlsCAFile = try source.string("database.tls_ca_file", default: tlsCAFile)
        try validate()
    }

    /// The URL parses, a keep-alive can run before the idle timeout, and the TLS keys fit the
    /// host (``checkTLS(host:)``); the worker refuses to start otherwise, with the key named.
    public func validate() throws {
        if keepAliveSeconds > 0, keepAliveSeconds >= idleTimeoutSeconds {
            throw ConfigError(key: "database.keep_alive_seconds", reason: "must be below database.idle_timeout_seconds (\(idleTimeoutSeconds)), or 0: an idle connection is closed before its keep-alive would run, got \(keepAliveSeconds)")
        }
        let nodes = try endpoint().nodes
        for node in nodes { try checkTLS(host: node.host) }
        // Through the relay, TLS checks the first host's name: an address is none.
        if nodes.count > 1, tls != .disable, (try? ClientIP(nodes[0].host)) != nil {
            throw ConfigError(key: "database.url", reason: "with several hosts and database.tls \(tls.rawValue), the first host must be a name its certificate holds, not an address")
        }
    }

    /// Hosts, user, password and database parsed from ``url``.
    public struct Endpoint: Sendable {
        /// One, or several (`host:port,host:port`: the one not in recovery is used, ``PrimaryRelay``).
        public var nodes: [PrimaryRelay.Node]
        public var user: String
        public var password: String?
        public var database: String
        public var host: String { nodes[0].host }
        public var port: Int { nodes[0].port }
    }

    public func endpoint() throws -> Endpoint {
        // libpq's several hosts, `postgres://user@db-1:5432,db-2:5432/herald`: parsed one at a time.
        var first = url
        var more: [PrimaryRelay.Node] = []
        if let scheme = url.range(of: "://") {
            // The authority ends at the path, query or fragment; the hosts follow its last `@`.
            let authorityEnd = url[scheme.upperBound...].firstIndex(where: { "/?#".contains($0) }) ?? url.endIndex
            let hostsStart = url[scheme.upperBound..<authorityEnd].lastIndex(of: "@").map { url.index(after: $0) } ?? scheme.upperBound
            let hosts = url[hostsStart..<authorityEnd].split(separator: ",", omittingEmptySubsequences: false)
            if hosts.count > 1 {
                first = String(url[..<hostsStart]) + hosts[0] + String(url[authorityEnd...])
                more = try hosts.dropFirst().map { host in
                    guard let parsed = URLComponents(string: "postgres://\(host)"), let name = parsed.host, !name.isEmpty,
                          (1...65535).contains(parsed.port ?? 5432) else {
                        throw ConfigError(key: "database.url", reason: "host \(host.isEmpty ? "(empty)" : String(host)) of the list is not host[:port]")
                    }
                    return PrimaryRelay.Node(host: Self.unbracketed(name), port: parsed.port ?? 5432)
                }
            }
        }
        guard let components = URLComponents(string: first),
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
            nodes: [PrimaryRelay.Node(host: Self.unbracketed(host), port: components.port ?? 5432)] + more,
            user: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database
        )
    }

    /// An IPv6 literal as a socket takes it: `[::1]` → `::1`.
    static func unbracketed(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
