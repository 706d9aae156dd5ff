import AsyncHTTPClient
import Foundation
import HeraldStubs
import NIOCore
import NIOFoundationCompat
#if canImport(Glibc)
import Glibc
#endif

/// herald-api under the `api` scenario: the built executable beside the fleet's, a server key of
/// its own (`heraldctl api-keys create --asserts-client-ip`), SIGKILLed and started again by the
/// harness; each process's peak resident set (VmHWM) is read before it is killed or stopped.
final class APIDoor: @unchecked Sendable {
    let binDir: String
    let logDir: String
    let environment: [String: String]
    let port: Int
    let opsPort: Int
    /// `id:secret` of the key the clients present (HTTP Basic).
    let credentials: String
    private let lock = NSLock()
    private var process: ChildProcess
    private var starts = 1
    private var peakMB = 0.0

    init(binDir: String, logDir: String, environment: [String: String], port: Int) async throws {
        self.binDir = binDir
        self.logDir = logDir
        self.port = port
        opsPort = port + 1
        // The clients are this harness: their own key and the auth-failure limiter out of the way.
        self.environment = environment.merging([
            "HERALD_API_PORT": String(port), "HERALD_HTTP_PORT": String(port + 1),
            "HERALD_API_KEY_RATE_PER_SECOND": "100000", "HERALD_API_KEY_RATE_BURST": "1000000",
        ]) { $1 }
        let created = try await ChildProcess.run("\(binDir)/heraldctl", ["api-keys", "create", "--name", "chaos", "--scopes", "sms", "--asserts-client-ip",
                                                                         "--output", "json"], environment: environment)
        guard let open = created.firstIndex(of: "{"), let close = created.lastIndex(of: "}"),
              let key = try JSONSerialization.jsonObject(with: Data(created[open...close].utf8)) as? [String: Any],
              let id = key["id"] as? String, let secret = key["secret"] as? String else { throw ChaosFailure("heraldctl api-keys create printed no key: \(created.suffix(300))") }
        credentials = "\(id):\(secret)"
        process = try Self.spawn(binDir: binDir, logDir: logDir, environment: self.environment, start: 1)
    }

    private static func spawn(binDir: String, logDir: String, environment: [String: String], start: Int) throws -> ChildProcess {
        try ChildProcess("\(binDir)/herald-api", [], environment: environment, outputPath: "\(logDir)/herald-api-\(start).log")
    }

    var url: String { "http://127.0.0.1:\(port)" }
    /// The highest peak resident set (VmHWM) of the processes ended so far, in MB (10⁶ bytes).
    var peakResidentMB: Double { lock.withLock { peakMB } }

    /// Takes the running process's peak into ``peakResidentMB``; called with the lock held.
    private func notePeak() {
        if let memory = ProcessMemory.read(process.pid) { peakMB = max(peakMB, memory.peakMB) }
    }

    /// SIGKILL, then started again at once.
    func killAndRestart() throws {
        try lock.withLock {
            notePeak()
            process.signal(SIGKILL)
            while process.isRunning { usleep(5_000) }
            starts += 1
            process = try Self.spawn(binDir: binDir, logDir: logDir, environment: environment, start: starts)
        }
    }

    func waitUntilReady(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await Fleet.get("http://127.0.0.1:\(opsPort)/readyz") == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ChaosFailure("herald-api not ready within \(timeout): \(lock.withLock { process.output.suffix(800) })")
    }

    func stop() async {
        let current = lock.withLock {
            notePeak()
            return process
        }
        current.signal(SIGTERM)
        if await current.waitForExit(timeout: .seconds(20)) == nil { current.signal(SIGKILL) }
    }

    /// What one `POST /v1/sms/verifications` got: the status, or nil when no answer came
    /// (refused connection, reset, timeout).
    func start(verificationID: String, phone: String, clientIP: String) async -> Int? {
        var request = HTTPClientRequest(url: url + "/v1/sms/verifications")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = ["verification_id": verificationID, "phone_number": phone, "client_ip": clientIP]
        request.body = .bytes(ByteBuffer(data: (try? JSONSerialization.data(withJSONObject: body)) ?? Data()))
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(10)) else { return nil }
        _ = try? await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }
}
