import Foundation
import Logging
import PostgresNIO
import Testing
@testable import HeraldRuntime

/// `database.url` with several hosts on the real PostgreSQL: the pool and the presence lock
/// reach the host that answers as a primary, through the process's relay. (The failover from a
/// primary to its promoted standby under load is `make chaos-cluster`'s cluster-failover.)
@Suite(.needsServers) struct DatabaseHostsIntegrationTests {
    @Test func theHostThatIsAPrimaryIsUsedWhateverItsPlaceInTheList() async throws {
        let url = TestEnvironment.databaseURL
        let host = try #require(url.firstMatch(of: /@([^\/]+)\//)?.1)
        // A port nobody listens on first, then the test database's server.
        var configuration = DatabaseConfiguration(url: url.replacingOccurrences(of: "@\(host)/", with: "@127.0.0.1:1,\(host)/"))
        configuration.tls = .disable
        let logger = Logger(label: "test")
        let client = try Database.makeClient(configuration, logger: logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        let rows = try await client.query("SELECT inet_server_port(), pg_is_in_recovery()", logger: logger).collect()
        let (port, recovering) = try #require(try rows.first?.decode((Int, Bool).self))
        #expect(port == Int(host.split(separator: ":").last ?? "") && !recovering)
        let target = try Database.target(configuration, logger: logger)
        #expect(target.host.hasPrefix("127.") && target.host != "127.0.0.1" && target.tlsServerName == nil, "through the relay, on a loopback address of its own")
    }
}
