import Foundation
import HeraldClient
import HeraldRuntime
import HeraldStubs
#if canImport(Glibc)
import Glibc
#endif

/// The herald-sms that decides herald-api's starts in the start-with-decision rows: one release
/// process on herald-api's namespace, its SMS to a local webhook provider that accepts each at
/// once, the send limits out of the way (wrk's starts all come from 127.0.0.1, each to a number
/// of its own; the bench measures the door, not the limits' refusals) and the fraud guard off,
/// as in `smsProcesses`' rows without controls.
final class DecidingWorker: Sendable {
    let process: ChildProcess
    let provider: StubHTTPServer

    init(configuration: HeraldConfiguration, publisher: HeraldClient, namespace: String, queue: String) async throws {
        provider = try await StubHTTPServer { _ in .init(status: 200, body: #"{"message_id":"bench"}"#) }
        let environment = BenchExecutables.smsEnvironment(configuration, namespace: namespace, providerURL: provider.baseURL + "/sms")
        process = try ChildProcess(BenchExecutables.path("herald-sms"), [], environment: environment, outputPath: "/dev/null")
        let ready = ContinuousClock.now + .seconds(30)
        while (try await publisher.connection.queueState(queue)?.consumerCount ?? 0) < 1 {
            guard process.isRunning, ContinuousClock.now < ready else { throw BenchFailure("the deciding herald-sms did not consume \(queue) within 30 s") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    var pid: Int32 { process.pid }

    func stop() async {
        process.signal(SIGTERM)
        if await process.waitForExit(timeout: .seconds(30)) == nil { process.signal(SIGKILL) }
        await provider.close()
    }
}
