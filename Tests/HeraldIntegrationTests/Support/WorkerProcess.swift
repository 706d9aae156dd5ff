import Foundation
import HeraldStubs

/// A built worker executable (`herald-sms`, …) started as a real process against a test
/// namespace, so tests can SIGKILL and SIGTERM it.
final class WorkerProcess: @unchecked Sendable {
    let child: ChildProcess
    let port: Int

    init(_ executable: String, namespace: String, environment extra: [String: String] = [:]) throws {
        port = Int.random(in: 20_000...40_000)
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_AMQP_URL"] = TestEnvironment.amqpURL
        environment["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
        environment["HERALD_DATABASE_TLS"] = "disable"
        environment["HERALD_AMQP_NAMESPACE"] = namespace
        environment["HERALD_AMQP_HEARTBEAT_SECONDS"] = "2"
        environment["HERALD_HTTP_PORT"] = String(port)
        environment["HERALD_RUNNER_RETRY_DELAYS_MS"] = "100,200,400"
        environment["HERALD_LOG_LEVEL"] = "info"
        environment["HERALD_SECRETS_HMAC_KEYS_FILE"] = TestEnvironment.hmacKeysFile
        environment["HERALD_SMS_TEMPLATES_DIR"] = TestEnvironment.templatesDirectory
        for (key, value) in extra { environment[key] = value }
        child = try ChildProcess(TestEnvironment.binDir + "/" + executable, [], environment: environment)
    }

    func signal(_ signal: Int32) { child.signal(signal) }

    /// Waits for exit; returns the exit status, nil on timeout.
    func waitForExit(timeout: Duration) async -> Int32? { await child.waitForExit(timeout: timeout) }

    /// True once `/readyz` answers 200.
    func ready() async -> Bool {
        (try? await ChildProcess.run("/usr/bin/curl", ["-fs", "-o", "/dev/null", "http://127.0.0.1:\(port)/readyz"], timeout: .seconds(5))) != nil
    }

    var log: String { child.output }
}
