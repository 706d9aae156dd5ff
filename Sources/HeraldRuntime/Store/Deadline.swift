import Synchronization

/// The operation did not finish within its deadline.
public struct DeadlineExceeded: Error, Sendable, CustomStringConvertible {
    public var seconds: Int64
    public var description: String { "no answer within \(seconds) s" }
}

/// Runs `operation` but gives up after `timeout`, even if the operation itself never
/// returns (a pool lease or query on a connection that died without failing its
/// promise has been seen to hang after a database restart). The abandoned operation is
/// cancelled and left to finish on its own.
///
/// The caller's cancellation is the operation's too: a cancelled caller (the runner's drain
/// timeout cancelling its handlers) cancels the operation at once, then waits for it at most
/// `grace` more (and never past `timeout`): an operation that stops at the cancellation ends
/// with its own result (a handler that already sent returns what it recorded, so the runner
/// does not requeue a job whose record is still being written), and one that ignores it is
/// given up with `CancellationError`. The operation runs in a task of its own (so that a hung
/// one cannot hold its caller), which would not hear of the caller's cancellation otherwise: a
/// handler would run on to its own deadline, past the shutdown's bound. A caller cancelled
/// before it calls still starts the operation, cancelled from its first instruction.
public func withDeadline<T: Sendable>(_ timeout: Duration, afterCancellation grace: Duration = .seconds(5),
                                      _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = DeadlineRace<T>(grace: grace)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.start(continuation, timeout: timeout, operation)
        }
    } onCancel: {
        race.callerCancelled()
    }
}

/// Whichever of the operation, the deadline (``DeadlineClock``) and the grace after the
/// caller's cancellation ends first resumes the continuation; the operation is cancelled
/// unless it was first, and the timers unless they were.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var deadline: UInt64?
        var graceTimer: UInt64?
        /// The caller was cancelled (possibly before the race started).
        var callerCancelled = false
        var started = false
    }
    private let state = Mutex(State())
    private let grace: Duration

    init(grace: Duration) { self.grace = grace }

    func start(_ continuation: CheckedContinuation<T, any Error>, timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) {
        state.withLock { state in
            state.started = true
            state.continuation = continuation
        }
        let deadline = DeadlineClock.shared.schedule(after: timeout) {
            self.finish(.failure(DeadlineExceeded(seconds: timeout.components.seconds)))
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            self.finish(result, byWork: true)
        }
        let (settled, cancelledEarly) = state.withLock { state -> (Bool, Bool) in
            state.work = work
            state.deadline = deadline
            return (state.continuation == nil, state.callerCancelled)
        }
        if settled {
            work.cancel()
            DeadlineClock.shared.cancel(deadline)
        } else if cancelledEarly {
            cancelWorkAndArmGrace()
        }
    }

    /// From the caller's cancellation handler, on whatever thread cancelled it, possibly
    /// before ``start(_:timeout:_:)`` (which then cancels the work as soon as it exists).
    func callerCancelled() {
        let started = state.withLock { state -> Bool in
            state.callerCancelled = true
            return state.started && state.work != nil
        }
        if started { cancelWorkAndArmGrace() }
    }

    private func cancelWorkAndArmGrace() {
        let work = state.withLock { $0.work }
        work?.cancel()
        let timer = DeadlineClock.shared.schedule(after: grace) { self.finish(.failure(CancellationError())) }
        let late = state.withLock { state -> Bool in
            guard state.continuation != nil, state.graceTimer == nil else { return true }
            state.graceTimer = timer
            return false
        }
        if late { DeadlineClock.shared.cancel(timer) }
    }

    /// The first call resumes the continuation; the losers are cancelled (a late operation is
    /// left to finish on its own, a timer will not fire).
    private func finish(_ result: Result<T, any Error>, byWork: Bool = false) {
        let (continuation, work, deadline, graceTimer) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.deadline, state.graceTimer)
        }
        guard let continuation else { return }
        // The caller first: cancelling the work runs its cancellation handlers here, on the
        // clock's thread when a timer won.
        continuation.resume(with: result)
        if !byWork { work?.cancel() }
        if let deadline { DeadlineClock.shared.cancel(deadline) }
        if let graceTimer { DeadlineClock.shared.cancel(graceTimer) }
    }
}
