import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` and reaped with `waitpid(WNOHANG)` polling:
/// Foundation's `Process.waitUntilExit` has been seen to hang on Linux when the child
/// leaves daemons behind (pg_ctl, rabbitmq-server). Standard output and error go to one file
/// (a new temporary file unless `outputPath` is given). Used by the tests, herald-bench and
/// herald-chaos to run Herald's executables and the servers' scripts.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    public let outputPath: String
    private let lock = NSLock()
    private var status: Int32?

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, outputPath: String? = nil) throws {
        self.outputPath = outputPath ?? FileManager.default.temporaryDirectory.appendingPathComponent("herald-child-\(UUID().uuidString.prefix(8)).log").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, self.outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process: NIO opens its sockets without close-on-exec, and a child
        // holding a copy of a database connection keeps it open after this process closes it
        // (its transaction and locks stay, idle, as long as the child lives).
        Self.closeFrom(3, &actions)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, env)
        guard result == 0 else { throw ChildProcessError("posix_spawn \(executable) failed: \(result)") }
        self.pid = pid
    }

    public func signal(_ signal: Int32) { kill(pid, signal) }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare.
    private static let closeFromAction: CloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    /// The child closes every descriptor from `lowest` on; without glibc's action, this
    /// process's open descriptors are marked close-on-exec first.
    private static func closeFrom(_ lowest: Int32, _ actions: inout posix_spawn_file_actions_t) {
        if let closeFromAction, closeFromAction(&actions, lowest) == 0 { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let fd = Int32(name), fd >= lowest else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// The exit status (128 + signal when killed), nil while running.
    public var exitStatus: Int32? {
        lock.withLock {
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            let signalled = raw & 0x7F
            status = signalled == 0 ? (raw >> 8) & 0xFF : 128 + signalled
            return status
        }
    }

    public var isRunning: Bool { exitStatus == nil }

    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = exitStatus { return status }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return exitStatus
    }

    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Runs to completion; throws with the output when it exits non-zero.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Duration = .seconds(120)) async throws -> String {
        let child = try ChildProcess(executable, arguments, environment: environment)
        guard let status = await child.waitForExit(timeout: timeout) else {
            child.signal(SIGKILL)
            throw ChildProcessError("\(executable) \(arguments) timed out")
        }
        guard status == 0 else { throw ChildProcessError("\(executable) \(arguments) exited \(status): \(child.output.suffix(1000))") }
        return child.output
    }

    deinit { if exitStatus == nil { kill(pid, SIGKILL); _ = exitStatus } }
}

/// A child process that could not start, timed out, or exited non-zero (with its output's tail).
public struct ChildProcessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
