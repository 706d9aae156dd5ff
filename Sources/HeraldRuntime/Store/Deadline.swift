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
/// timeout cancelling its handlers) cancels the operation at once and stops waiting for it,
/// with `CancellationError`, as at the deadline. The operation runs in a task of its own (so
/// that a hung one cannot hold its caller), which would not hear of the caller's cancellation
/// otherwise: a handler would run on to its own deadline, past the shutdown's bound.
public func withDeadline<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.start(continuation, timeout: timeout, operation)
        }
    } onCancel: {
        race.callerCancelled()
    }
}

/// Whichever of the operation, the deadline (``DeadlineClock``) and the caller's cancellation
/// comes first resumes the continuation; the operation is cancelled unless it was first, and
/// the deadline unless it was.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var deadline: UInt64?
        /// The caller was cancelled before the race started: it starts nothing.
        var cancelledEarly = false
        var started = false
    }
    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>, timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) {
        let cancelled = state.withLock { state -> Bool in
            state.started = true
            if !state.cancelledEarly { state.continuation = continuation }
            return state.cancelledEarly
        }
        if cancelled {
            continuation.resume(throwing: CancellationError())
            return
        }
        let deadline = DeadlineClock.shared.schedule(after: timeout) {
            self.finish(.failure(DeadlineExceeded(seconds: timeout.components.seconds)), cancelWork: true)
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            self.finish(result, cancelWork: false)
        }
        let settled = state.withLock { state -> Bool in
            state.work = work
            state.deadline = deadline
            return state.continuation == nil
        }
        if settled {
            work.cancel()
            DeadlineClock.shared.cancel(deadline)
        }
    }

    /// From the caller's cancellation handler, on whatever thread cancelled it, possibly
    /// before ``start(_:timeout:_:)``.
    func callerCancelled() {
        let started = state.withLock { state -> Bool in
            if !state.started { state.cancelledEarly = true }
            return state.started
        }
        if started { finish(.failure(CancellationError()), cancelWork: true) }
    }

    /// The first call resumes the continuation; the losers are cancelled (a late operation is
    /// left to finish on its own, a deadline will not fire).
    private func finish(_ result: Result<T, any Error>, cancelWork: Bool) {
        let (continuation, work, deadline) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.deadline)
        }
        guard let continuation else { return }
        // The caller first: cancelling the work runs its cancellation handlers here, on the
        // clock's thread when the deadline won.
        continuation.resume(with: result)
        if cancelWork { work?.cancel() }
        if let deadline { DeadlineClock.shared.cancel(deadline) }
    }
}
