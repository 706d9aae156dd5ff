import AsyncHTTPClient
import Foundation
import HeraldRuntime
import HeraldStubs
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// herald-api as an operator runs it: the release executable next to herald-bench, with its own
/// broker connection and database pool, on the bench's broker namespace and database, on a free
/// loopback port, the per-key rate raised out of the way (`HERALD_API_KEY_RATE_PER_SECOND`,
/// `_BURST`: the bench measures the server, not the limiter's refusals), logs at error.
final class APIProcess: Sendable {
    let process: ChildProcess
    let port: Int
    var pid: Int32 { process.pid }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `decisionWaitMilliseconds`: `api.decision_wait_ms`; 0 answers every start 202 `queued` at
    /// once (no worker decides), else a herald-sms on the namespace answers it (``DecidingWorker``).
    init(configuration: HeraldConfiguration, namespace: String, decisionWaitMilliseconds: Int = 0) async throws {
        let executable = BenchExecutables.path("herald-api")
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchFailure("no \(executable): build it with swift build -c release --product herald-api (scripts/bench.sh does)")
        }
        port = try await Self.freeLoopbackPort()
        var environment = BenchExecutables.environment(configuration, namespace: namespace)
        environment["HERALD_API_HOST"] = "127.0.0.1"
        environment["HERALD_API_PORT"] = String(port)
        environment["HERALD_API_KEY_RATE_PER_SECOND"] = "100000"
        environment["HERALD_API_KEY_RATE_BURST"] = "1000000"
        environment["HERALD_API_DECISION_WAIT_MS"] = String(decisionWaitMilliseconds)
        process = try ChildProcess(executable, [], environment: environment)
        // Listening: /openapi.yaml (no key) answers.
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            guard process.isRunning else { throw BenchFailure("herald-api exited \(process.exitStatus ?? -1): \(process.output.suffix(1500))") }
            if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: baseURL + "/openapi.yaml"), timeout: .seconds(2)),
               response.status == .ok {
                break
            }
            guard ContinuousClock.now < deadline else { throw BenchFailure("herald-api did not answer on port \(port) within 30 s: \(process.output.suffix(1500))") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// SIGTERM (herald-api drains), SIGKILL after 30 s.
    func stop() async {
        process.signal(SIGTERM)
        if await process.waitForExit(timeout: .seconds(30)) == nil { process.signal(SIGKILL) }
        try? FileManager.default.removeItem(atPath: process.outputPath)
    }

    /// A loopback port nothing listens on now (bound, read, released).
    static func freeLoopbackPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        guard port > 0 else { throw BenchFailure("no free loopback port") }
        return port
    }
}
