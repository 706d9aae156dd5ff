import Foundation
import HeraldStubs
import Logging
import PostgresNIO
@testable import HeraldRuntime

/// A database of the test's own on the test server (`<test database>_<name>`), made empty,
/// handed to `body` as a URL and a connected client, and dropped afterwards whatever happens.
func withScratchDatabase<T>(_ name: String, _ body: (_ url: String, _ client: PostgresClient) async throws -> T) async throws -> T {
    let logger = TestEnvironment.logger("test.scratch.\(name)")
    let database = "\(TestEnvironment.databaseURL.split(separator: "/").last ?? "herald")_\(name)_\(UUID().uuidString.prefix(6).lowercased())"
    let url = String(TestEnvironment.databaseURL[..<TestEnvironment.databaseURL.lastIndex(of: "/")!]) + "/" + database
    try await adminQuery("CREATE DATABASE \"\(database)\"", logger: logger)
    do {
        var configuration = DatabaseConfiguration(url: url, maxConnections: 2)
        configuration.tls = .disable
        let client = try Database.makeClient(configuration, logger: logger)
        let task = Task { await client.run() }
        let result: T
        do {
            result = try await body(url, client)
        } catch {
            task.cancel()
            throw error
        }
        task.cancel()
        try await adminQuery("DROP DATABASE \"\(database)\" WITH (FORCE)", logger: logger)
        return result
    } catch {
        try? await adminQuery("DROP DATABASE \"\(database)\" WITH (FORCE)", logger: logger)
        throw error
    }
}

private func adminQuery(_ sql: String, logger: Logger) async throws {
    var admin = DatabaseConfiguration(url: TestEnvironment.databaseURL, maxConnections: 1)
    admin.tls = .disable
    let client = try Database.makeClient(admin, logger: logger)
    let task = Task { await client.run() }
    defer { task.cancel() }
    try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
}

/// Runs a PostgreSQL client program (psql, pg_dump) against `url`; returns its standard output.
func runPostgresTool(_ tool: String, _ arguments: [String], url: String) async throws -> String {
    var environment = ProcessInfo.processInfo.environment
    environment["PGOPTIONS"] = "-c client_min_messages=warning"
    let path = ["/usr/bin/\(tool)", "/usr/local/bin/\(tool)", "/usr/lib/postgresql/15/bin/\(tool)"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? tool
    return try await ChildProcess.run(path, arguments + [url], environment: environment)
}
