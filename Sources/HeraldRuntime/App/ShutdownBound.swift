import Foundation
import Logging
import ServiceLifecycle

/// Bounds a worker process's shutdown: once a graceful shutdown begins, a plain thread waits
/// `bound`, and if the process is still there it logs the fact and exits with
/// ``ExitCode/stuck`` (70). A thread, not a task, so that a starved or blocked task pool
/// cannot delay it, and an exit, not swift-service-lifecycle's cancellation limit, which ends
/// the process with a fatal error (a trap, exit 132, after a backtrace that can take minutes
/// on a busy machine). In the worker executables only: an in-process group (the tests, the
/// benchmark) must not end its host process.
public struct ShutdownBound: Service {
    public let bound: Duration
    let logger: Logger

    public init(bound: Duration, logger: Logger) {
        self.bound = bound
        self.logger = logger
    }

    /// Put it last in the group: the group shuts its services down in reverse order, so this
    /// one hears the shutdown first, starts the clock and returns, and the others stop after it.
    public func run() async throws {
        try? await gracefulShutdown()
        let (bound, logger) = (bound, logger)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: bound.seconds)
            logger.critical("shutdown exceeded its bound; exiting", metadata: ["bound_s": "\(bound.components.seconds)", "exit_code": "\(ExitCode.stuck.rawValue)"])
            exit(ExitCode.stuck.rawValue)
        }
    }
}
