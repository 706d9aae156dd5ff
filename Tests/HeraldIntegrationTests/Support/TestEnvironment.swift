import AMQP
import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
import Logging
import PostgresNIO
import ServiceLifecycle

/// Where the servers `make test` started are, and how to reach the built executables.
enum TestEnvironment {
    static let env = ProcessInfo.processInfo.environment
    static var amqpURL: String { env["HERALD_AMQP_URL"] ?? "amqp://guest:guest@127.0.0.1:55672/%2f" }
    static var databaseURL: String { env["HERALD_DATABASE_URL"] ?? "postgres://herald@127.0.0.1:55432/herald" }
    static var root: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
    static var binDir: String { env["HERALD_TEST_BIN_DIR"] ?? root.appendingPathComponent(".build/debug").path }
    static var servicesScript: String { env["HERALD_SERVICES_SCRIPT"] ?? root.appendingPathComponent("scripts/services.sh").path }

    /// The HMAC keys stored codes are hashed with: `make test`'s (`HERALD_DEV_HMAC_KEYS_FILE`
    /// of scripts/services.sh env), else a key made for this test process.
    static let hmacKeysFile: String = {
        if let file = env["HERALD_DEV_HMAC_KEYS_FILE"], FileManager.default.fileExists(atPath: file) { return file }
        let path = NSTemporaryDirectory() + "herald-test-hmac-\(getpid())"
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        _ = FileManager.default.createFile(atPath: path, contents: Data("test1:\(key)\n".utf8), attributes: [.posixPermissions: 0o600])
        return path
    }()
    static var templatesDirectory: String { root.appendingPathComponent("Config/templates/sms").path }

    /// A fresh namespace per test, so tests running side by side never share queues.
    static func namespace() -> String { "t" + UUID().uuidString.prefix(8).lowercased() }

    static func configuration(namespace: String, retryDelays: [Int] = [100, 200, 400], maxAttempts: Int = 3) -> HeraldConfiguration {
        var configuration = HeraldConfiguration()
        configuration.amqp = BrokerConfiguration(url: amqpURL, namespace: namespace)
        configuration.amqp.heartbeatSeconds = 2
        configuration.amqp.prefetch = 16
        configuration.database = DatabaseConfiguration(url: databaseURL, maxConnections: 8)
        configuration.database.tls = .disable
        configuration.runner.retryDelaysMilliseconds = retryDelays
        configuration.runner.maxAttempts = maxAttempts
        configuration.runner.drainTimeoutSeconds = 10
        configuration.secrets.hmacKeys = (try? String(contentsOfFile: hmacKeysFile, encoding: .utf8)) ?? ""
        configuration.sms.templatesDirectory = templatesDirectory
        // On by default, and its counts are per region and prefix in the shared database: the
        // suites' unverified sends would pause each other's regions. FraudGuardTests turn it on.
        configuration.sms.fraudGuard.enabled = false
        return configuration
    }

    static func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = Logger.Level(rawValue: env["HERALD_TEST_LOG_LEVEL"] ?? "warning") ?? .warning
        return logger
    }

    /// Runs `scripts/services.sh ARGS` (restart RabbitMQ, stop PostgreSQL, …).
    static func services(_ arguments: String...) async throws {
        _ = try await ChildProcess.run("/bin/bash", [servicesScript] + arguments)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(20), every interval: Duration = .milliseconds(100), _ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if (try? await condition()) == true { return }
        try await Task.sleep(for: interval)
    }
    if try await condition() { return }
    throw TestFailure("timed out waiting for: \(what)")
}
