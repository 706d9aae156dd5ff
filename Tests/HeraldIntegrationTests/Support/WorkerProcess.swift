import Foundation
import Glibc
import HeraldStubs

/// A built worker executable (`herald-sms`, …) started as a real process against a test
/// namespace, so tests can SIGKILL and SIGTERM it.
final class WorkerProcess: @unchecked Sendable {
    let executable: String
    let child: ChildProcess
    let port: Int

    /// `workingDirectory`: started there (through `sh -c 'cd … && exec …'`, so the pid is the
    /// worker's); `unset`: variables of the test's own setup to leave out.
    init(_ executable: String, namespace: String, environment extra: [String: String] = [:], workingDirectory: String? = nil, unset: Set<String> = []) throws {
        self.executable = executable
        port = try Self.freePort()
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
        // As in TestEnvironment.configuration: the suites' unverified sends would pause each other.
        environment["HERALD_SMS_FRAUD_GUARD_ENABLED"] = "false"
        for (key, value) in extra { environment[key] = value }
        for key in unset { environment[key] = nil }
        let binary = TestEnvironment.binDir + "/" + executable
        if let workingDirectory {
            child = try ChildProcess("/bin/sh", ["-c", #"cd "$1" && exec "$0""#, binary, workingDirectory], environment: environment)
        } else {
            child = try ChildProcess(binary, [], environment: environment)
        }
    }

    /// A port for the worker's operations endpoint: below Linux's ephemeral range (32768–60999,
    /// `net.ipv4.ip_local_port_range`), so none of the client connections the parallel suites
    /// open can take it between this check and the worker's bind, and free right now.
    static func freePort() throws -> Int {
        for _ in 0..<100 {
            let port = Int.random(in: 20_000..<32_768)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound == 0 { return port }
        }
        throw TestFailure("no free port for a worker's operations endpoint in 20000–32767")
    }

    func signal(_ signal: Int32) { child.signal(signal) }

    /// Waits for exit; returns the exit status, nil on timeout.
    func waitForExit(timeout: Duration) async -> Int32? { await child.waitForExit(timeout: timeout) }

    /// SIGTERM, and SIGKILL if it has not exited after `grace`: a process stuck before it was
    /// ready (a herald-api whose relay never reached the database) ignored SIGTERM and outlived
    /// the test run, holding a connection.
    func stop(grace: Duration = .seconds(20)) async {
        signal(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            signal(SIGKILL)
            _ = await waitForExit(timeout: .seconds(10))
        }
    }

    /// True once `/readyz` answers 200.
    func ready() async -> Bool {
        (try? await ChildProcess.run("/usr/bin/curl", ["-fs", "-o", "/dev/null", "http://127.0.0.1:\(port)/readyz"], timeout: .seconds(5))) != nil
    }

    /// Waits until `/readyz` answers 200. A worker that exits first, or is not ready in time,
    /// fails the test with its exit status and the end of its output.
    func waitUntilReady(timeout: Duration = .seconds(40)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = child.exitStatus {
                throw TestFailure("\(executable) exited with status \(status) before it was ready; its output ends:\n\(tail)")
            }
            if await ready() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("\(executable) was not ready within \(timeout) (port \(port)); its output ends:\n\(tail)")
    }

    var log: String { child.output }

    /// The last 40 lines of the worker's output.
    var tail: String { log.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n") }
}
