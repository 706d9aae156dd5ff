import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Testing

@Suite struct ConfigurationTests {
    private func write(_ yaml: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID()).yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func defaultsWithoutAFile() throws {
        let configuration = try HeraldConfiguration(every: ConfigSource(path: nil, environment: [:]))
        #expect(configuration.amqp.namespace == "herald")
        #expect(configuration.amqp.prefetch == 64)
        #expect(configuration.runner.maxAttempts == 5)
        #expect(configuration.runner.retryDelaysMilliseconds == [1_000, 5_000, 30_000, 120_000])
    }

    @Test func theShippedFileLoadsWithNoUnknownKeys() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Config/herald.yaml").path
        let source = try ConfigSource(path: path, environment: [:])
        let configuration = try HeraldConfiguration(every: source)
        #expect(source.unknownKeys() == [])
        #expect(configuration.amqp.queueType == .quorum)
        #expect(configuration.database.maxConnections == 16)
    }

    @Test func environmentOverridesTheFile() throws {
        let path = try write("amqp:\n  prefetch: 10\nrunner:\n  retry_delays_ms: [10, 20]\n")
        let source = try ConfigSource(path: path, environment: ["HERALD_AMQP_PREFETCH": "7", "HERALD_RUNNER_RETRY_DELAYS_MS": "50, 60,70"])
        let configuration = try HeraldConfiguration(every: source)
        #expect(configuration.amqp.prefetch == 7)
        #expect(configuration.runner.retryDelaysMilliseconds == [50, 60, 70])
    }

    @Test func secretsComeFromFiles() throws {
        let secret = try write("amqp://svc:s3cr3t@broker:5672/%2f\n")
        let source = try ConfigSource(path: nil, environment: ["HERALD_AMQP_URL_FILE": secret])
        let configuration = try HeraldConfiguration(every: source)
        #expect(configuration.amqp.url == "amqp://svc:s3cr3t@broker:5672/%2f")
    }

    @Test func anInvalidValueNamesItsKey() throws {
        let error = #expect(throws: ConfigError.self) {
            try HeraldConfiguration(every: ConfigSource(path: nil, environment: ["HERALD_AMQP_PREFETCH": "lots"]))
        }
        #expect(error?.key == "amqp.prefetch")
        let range = #expect(throws: ConfigError.self) {
            try HeraldConfiguration(every: ConfigSource(path: nil, environment: ["HERALD_RUNNER_MAX_ATTEMPTS": "0"]))
        }
        #expect(range?.key == "runner.max_attempts")
        let choice = #expect(throws: ConfigError.self) {
            try HeraldConfiguration(every: ConfigSource(path: nil, environment: ["HERALD_AMQP_QUEUE_TYPE": "stream"]))
        }
        #expect(choice?.key == "amqp.queue_type")
        let url = #expect(throws: ConfigError.self) {
            try HeraldConfiguration(every: ConfigSource(path: nil, environment: ["HERALD_DATABASE_URL": "mysql://x"]))
        }
        #expect(url?.key == "database.url")
    }

    @Test func aKeepAliveMustComeBeforeTheIdleTimeout() throws {
        func database(_ environment: [String: String]) throws -> DatabaseConfiguration {
            try HeraldConfiguration(every: ConfigSource(path: nil, environment: environment)).database
        }
        let defaults = try database([:])
        #expect(defaults.idleTimeoutSeconds == 10)
        #expect(defaults.keepAliveSeconds == 0)
        let both = try database(["HERALD_DATABASE_IDLE_TIMEOUT_SECONDS": "300", "HERALD_DATABASE_KEEP_ALIVE_SECONDS": "30"])
        #expect((both.idleTimeoutSeconds, both.keepAliveSeconds) == (300, 30))
        let never = #expect(throws: ConfigError.self) { try database(["HERALD_DATABASE_KEEP_ALIVE_SECONDS": "10"]) }
        #expect(never?.key == "database.keep_alive_seconds")
        #expect(never?.reason.contains("database.idle_timeout_seconds (10)") == true)
        let zero = #expect(throws: ConfigError.self) { try database(["HERALD_DATABASE_IDLE_TIMEOUT_SECONDS": "0"]) }
        #expect(zero?.key == "database.idle_timeout_seconds")
    }

    @Test func unknownKeysAreReported() throws {
        let path = try write("amqp:\n  prefetsh: 3\nlog:\n  level: debug\n")
        let source = try ConfigSource(path: path, environment: [:])
        _ = try HeraldConfiguration(every: source)
        #expect(source.unknownKeys() == ["amqp.prefetsh"])
    }

    @Test func aBrokenFileIsAClearError() throws {
        let path = try write("amqp: [unclosed\n")
        #expect(throws: ConfigError.self) { try ConfigSource(path: path, environment: [:]) }
        #expect(throws: ConfigError.self) { try ConfigSource(path: "/nonexistent/herald.yaml", environment: [:]) }
    }
}
