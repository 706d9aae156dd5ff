import Logging
import PostgresNIO

/// The one way Herald waits out a database outage: an operation is run with a deadline per
/// try and run again, with a growing pause, for as long as the database is unreachable,
/// never giving up while the process runs. Any other error is thrown; cancellation (a drain
/// timeout) ends the wait with `CancellationError`.
///
/// The runner holds a delivery this way (never acked, never dead-lettered while the database
/// is away), and a handler holds the record of a side effect that already happened (giving up
/// would make the redelivery do it again), through ``JobContext/untilDatabase(_:)``.
public struct DatabaseHold: Sendable {
    /// The deadline of one try (`database.operation_timeout_seconds`).
    public var operationTimeout: Duration
    /// Told whether the database answered (the `/readyz` state and the wait metric).
    public var report: @Sendable (_ up: Bool) -> Void

    public init(operationTimeout: Duration = .seconds(15), report: @escaping @Sendable (_ up: Bool) -> Void = { _ in }) {
        self.operationTimeout = operationTimeout
        self.report = report
    }

    public func run<T: Sendable>(_ logger: Logger, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        var delay = Duration.milliseconds(100)
        var warned = false
        while true {
            do {
                try Task.checkCancellation()
                let result = try await withDeadline(operationTimeout, operation)
                report(true)
                if warned { logger.info("database reachable again") }
                return result
            } catch where DatabaseAvailability.isUnavailable(error) {
                report(false)
                if !warned {
                    logger.warning("database unreachable; holding until it returns", metadata: ["error": "\(DatabaseAvailability.describe(error))"])
                    warned = true
                }
                try Task.checkCancellation()
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }
}
