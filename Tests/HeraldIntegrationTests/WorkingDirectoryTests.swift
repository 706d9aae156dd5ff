import Foundation
import HeraldStubs
import Testing

/// A worker started from any directory finds its templates: relative `templates_dir`s are
/// resolved against the configuration file's directory (docs/configuration.md, Relative paths).
@Suite(.needsServers) struct WorkingDirectoryTests {
    @Test(arguments: ["herald-sms", "herald-email"])
    func aWorkerStartedFromTheRootDirectoryWithTheShippedConfigurationBecomesReady(executable: String) async throws {
        try await withHarness() { harness in
            // The shipped file by its absolute path, its templates_dir relative to it; no
            // HERALD_*_TEMPLATES_DIR, no Config/ under the working directory.
            let configuration = TestEnvironment.root.appendingPathComponent("Config/herald.yaml").path
            let worker = try WorkerProcess(executable, namespace: harness.namespace, environment: ["HERALD_CONFIG": configuration],
                                           workingDirectory: "/", unset: ["HERALD_SMS_TEMPLATES_DIR", "HERALD_EMAIL_TEMPLATES_DIR"])
            do {
                try await worker.waitUntilReady()
            } catch {
                worker.signal(SIGKILL)
                _ = await worker.waitForExit(timeout: .seconds(5))
                throw error
            }
            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(20)) == 0)
        }
    }
}
