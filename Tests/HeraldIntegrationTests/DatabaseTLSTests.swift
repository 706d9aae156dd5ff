import Foundation
import HeraldStubs
import Logging
import PostgresNIO
import Testing
@testable import HeraldRuntime

/// TLS to the real PostgreSQL (scripts/services.sh starts it with a development CA):
/// `require` verifies the server against `database.tls_ca_file`, and nothing else passes.
@Suite(.needsServers) struct DatabaseTLSTests {
    /// The local server's CA: `database.tls_ca_file` of `scripts/services.sh env`.
    static var caFile: String {
        TestEnvironment.env["HERALD_DATABASE_TLS_CA_FILE"] ?? TestEnvironment.root.appendingPathComponent(".run/postgres-tls/ca.pem").path
    }

    static func configuration(_ mode: DatabaseConfiguration.TLSMode, caFile: String) -> DatabaseConfiguration {
        var configuration = DatabaseConfiguration(url: TestEnvironment.databaseURL, maxConnections: 2)
        configuration.tls = mode
        configuration.tlsCAFile = caFile
        return configuration
    }

    /// Opens one connection the way the worker's presence lock does and asks the server
    /// whether it is encrypted.
    static func encrypted(_ configuration: DatabaseConfiguration) async throws -> Bool {
        let endpoint = try configuration.endpoint()
        let config = try Database.connection(configuration, host: endpoint.host, port: endpoint.port, tlsServerName: nil)
        let logger = TestEnvironment.logger("db-tls")
        let connection = try await PostgresConnection.connect(configuration: config, id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger)
        for try await ssl in rows.decode(Bool.self) { return ssl }
        throw TestFailure("pg_stat_ssl has no row for this session")
    }

    @Test func requireWithTheCAConnectsOverTLSThroughThePool() async throws {
        let caFile = Self.caFile
        try #require(FileManager.default.fileExists(atPath: caFile), "no CA at \(caFile): start PostgreSQL with scripts/services.sh")
        #expect(try await Self.encrypted(Self.configuration(.require, caFile: caFile)))
        #expect(try await Self.encrypted(Self.configuration(.prefer, caFile: caFile)))

        // The shared pool every worker uses, with the same settings.
        let logger = TestEnvironment.logger("db-tls-pool")
        let client = try Database.makeClient(Self.configuration(.require, caFile: caFile), logger: logger)
        let task = Task { await client.run() }
        defer { task.cancel() }
        let ssl = try await withDeadline(.seconds(15)) {
            let rows = try await client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger)
            for try await ssl in rows.decode(Bool.self) { return ssl }
            return false
        }
        #expect(ssl)
    }

    @Test func requireRefusesAServerItCannotVerify() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.caFile), "no CA at \(Self.caFile): start PostgreSQL with scripts/services.sh")
        // The system trust store does not know the development CA.
        await #expect(throws: (any Error).self) { _ = try await Self.encrypted(Self.configuration(.require, caFile: "")) }
        // Nor does another CA (a throwaway one made here).
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("herald-other-ca-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try await ChildProcess.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                            "-days", "1", "-subj", "/CN=other", "-keyout", dir + "/key.pem", "-out", dir + "/ca.pem"])
        await #expect(throws: (any Error).self) { _ = try await Self.encrypted(Self.configuration(.require, caFile: dir + "/ca.pem")) }
    }
}
