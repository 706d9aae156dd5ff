import AsyncHTTPClient
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldStubs
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The worker processes under test: the built executables, several per kind, each with its
/// own operations port and a log file per start. Kills and restarts are the harness's own;
/// any other exit is counted as a crash.
final class Fleet: @unchecked Sendable {
    struct Worker {
        let kind: JobKind
        let index: Int
        let port: Int
        var process: ChildProcess
        var starts: Int
        var name: String { "herald-\(kind.rawValue)#\(index)" }
    }

    let binDir: String
    let logDir: String
    let environment: [String: String]
    private let lock = NSLock()
    private var workers: [Worker] = []
    private var crashes: [String] = []

    init(counts: [(JobKind, Int)], binDir: String, logDir: String, environment: [String: String], basePort: Int) throws {
        self.binDir = binDir
        self.logDir = logDir
        self.environment = environment
        try FileManager.default.createDirectory(atPath: logDir, withIntermediateDirectories: true)
        var port = basePort
        for (kind, count) in counts {
            for index in 0..<count {
                let process = try Self.spawn(kind: kind, index: index, port: port, start: 1, binDir: binDir, logDir: logDir, environment: environment)
                workers.append(Worker(kind: kind, index: index, port: port, process: process, starts: 1))
                port += 1
            }
        }
    }

    private static func spawn(kind: JobKind, index: Int, port: Int, start: Int, binDir: String, logDir: String, environment: [String: String]) throws -> ChildProcess {
        var env = environment
        env["HERALD_HTTP_PORT"] = String(port)
        return try ChildProcess("\(binDir)/herald-\(kind.rawValue)", [], environment: env,
                                outputPath: "\(logDir)/herald-\(kind.rawValue)-\(index)-\(start).log")
    }

    var names: [String] { lock.withLock { workers.map(\.name) } }
    /// Each worker's kind (a kind twice when it runs two workers).
    var kinds: [JobKind] { lock.withLock { workers.map(\.kind) } }
    var logFiles: [String] { (try? FileManager.default.contentsOfDirectory(atPath: logDir).map { "\(logDir)/\($0)" }) ?? [] }
    var ports: [Int] { lock.withLock { workers.map(\.port) } }
    var pids: [pid_t] { lock.withLock { workers.map(\.process.pid) } }

    /// Workers that exited without the harness asking (a crash), noted once each.
    func unexpectedExits() -> [String] {
        lock.withLock {
            for worker in workers where !worker.process.isRunning {
                let note = "\(worker.name) exited \(worker.process.exitStatus ?? -1) (start \(worker.starts))"
                if !crashes.contains(note) { crashes.append(note) }
            }
            return crashes
        }
    }

    /// SIGKILL one worker at random and start it again at once; returns its name.
    func killRandomAndRestart() throws -> String {
        try lock.withLock {
            let i = Int.random(in: workers.indices)
            var worker = workers[i]
            worker.process.signal(SIGKILL)
            while worker.process.isRunning { usleep(5_000) }
            worker.starts += 1
            worker.process = try Self.spawn(kind: worker.kind, index: worker.index, port: worker.port, start: worker.starts, binDir: binDir, logDir: logDir, environment: environment)
            workers[i] = worker
            return worker.name
        }
    }

    /// SIGTERM every worker, as a rollout does, and wait for them to drain and exit. Returns the
    /// exit statuses (0 is a clean drain).
    func drainAll(timeout: Duration = .seconds(60)) async -> [Int32] {
        let current = lock.withLock { workers }
        for worker in current { worker.process.signal(SIGTERM) }
        var statuses: [Int32] = []
        for worker in current { statuses.append(await worker.process.waitForExit(timeout: timeout) ?? -1) }
        return statuses
    }

    /// Starts every worker again (after `drainAll`), with `overrides` on top of the fleet's
    /// environment for this start only.
    func startAll(overriding overrides: [String: String] = [:]) throws {
        let environment = environment.merging(overrides) { $1 }
        try lock.withLock {
            for i in workers.indices {
                workers[i].starts += 1
                let w = workers[i]
                workers[i].process = try Self.spawn(kind: w.kind, index: w.index, port: w.port, start: w.starts, binDir: binDir, logDir: logDir, environment: environment)
            }
        }
    }

    /// Sends `signal` to every worker at once (SIGSTOP and SIGCONT hold a start: reaping
    /// without WUNTRACED does not take a stopped worker for an exited one).
    func signalAll(_ signal: Int32) {
        for worker in lock.withLock({ workers }) { worker.process.signal(signal) }
    }

    /// Stops everything (SIGTERM, then SIGKILL after 40 s).
    func stop() async {
        _ = await drainAll(timeout: .seconds(40))
        for worker in lock.withLock({ workers }) where worker.process.isRunning { worker.process.signal(SIGKILL) }
    }

    /// Each worker's `/readyz`: true when it answers 200.
    func readiness() async -> [String: Bool] {
        let current = lock.withLock { workers }
        var out: [String: Bool] = [:]
        await withTaskGroup(of: (String, Bool).self) { group in
            for worker in current {
                group.addTask { (worker.name, await Self.get("http://127.0.0.1:\(worker.port)/readyz") == 200) }
            }
            for await (name, ready) in group { out[name] = ready }
        }
        return out
    }

    func waitUntilReady(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await readiness().values.allSatisfy({ $0 }) { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ChaosFailure("workers not ready within \(timeout): \(await readiness().filter { !$0.value }.keys.sorted())")
    }

    /// Every worker's `/metrics` text, for the secrecy check.
    func metrics() async -> String {
        var text = ""
        for port in ports { text += await Self.body("http://127.0.0.1:\(port)/metrics") ?? "" }
        return text
    }

    static func get(_ url: String) async -> Int? {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(2)) else { return nil }
        _ = try? await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    static func body(_ url: String) async -> String? {
        guard let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(5)),
              let buffer = try? await response.body.collect(upTo: 16 << 20) else { return nil }
        return String(buffer: buffer)
    }
}

/// The harness itself could not do what a scenario needs (not a finding about Herald).
struct ChaosFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
