import Testing
@testable import HeraldRuntime

/// `database.url` with several hosts (libpq's form): each parsed, the TLS rule applied to each.
@Suite struct DatabaseHostsTests {
    @Test func severalHostsAreParsedInOrder() throws {
        let endpoint = try DatabaseConfiguration(url: "postgres://herald:p%40ss@db-1:5432,db-2,[::1]:6432/herald").endpoint()
        #expect(endpoint.nodes.map(\.description) == ["db-1:5432", "db-2:5432", "[::1]:6432"])
        #expect(endpoint.nodes[2].host == "::1")
        #expect(endpoint.user == "herald" && endpoint.password == "p@ss" && endpoint.database == "herald")
        #expect(try DatabaseConfiguration(url: "postgres://herald@db-1/herald").endpoint().nodes.count == 1)
    }

    @Test func aBadHostOrAClearTextRemoteHostIsNamed() throws {
        let bad = #expect(throws: ConfigError.self) { try DatabaseConfiguration(url: "postgres://herald@db-1,,db-3/herald").endpoint() }
        #expect(bad?.key == "database.url")
        var remote = DatabaseConfiguration(url: "postgres://herald@127.0.0.1:5432,db.example.com:5432/herald")
        remote.tls = .disable
        let error = #expect(throws: ConfigError.self) { try remote.validate() }
        #expect(error?.key == "database.tls" && error?.reason.contains("db.example.com") == true)
        // TLS through the relay checks the first host's name: an address there is refused.
        let address = #expect(throws: ConfigError.self) { try DatabaseConfiguration(url: "postgres://herald@10.0.0.5,db-2/herald").validate() }
        #expect(address?.key == "database.url")
        #expect(throws: ConfigError.self) { try DatabaseConfiguration(url: "postgres://herald@db-1,db-2:99999/herald").endpoint() }
        #expect(try DatabaseConfiguration(url: "postgres://u:p@ss@db-1,db-2/herald").endpoint().password == "p@ss")
    }
}
