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
public func withDeadline<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let race = DeadlineRace(continuation)
        race.start(timeout: timeout, operation)
    }
}

/// Whichever of the operation and the deadline (``DeadlineClock``) finishes first resumes
/// the continuation and cancels the other.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var deadline: UInt64?
    }
    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        state = Mutex(State(continuation: continuation))
    }

    func start(timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) {
        let deadline = DeadlineClock.shared.schedule(after: timeout) {
            self.finish(.failure(DeadlineExceeded(seconds: timeout.components.seconds)), byDeadline: true)
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            self.finish(result, byDeadline: false)
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

    /// The first call resumes the continuation; the loser is cancelled (a late operation is
    /// left to finish on its own, a deadline will not fire).
    private func finish(_ result: Result<T, any Error>, byDeadline: Bool) {
        let (continuation, work, deadline) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.deadline)
        }
        guard let continuation else { return }
        // The caller first: cancelling the work runs its cancellation handlers here, on the
        // clock's thread when the deadline won.
        continuation.resume(with: result)
        if byDeadline { work?.cancel() } else if let deadline { DeadlineClock.shared.cancel(deadline) }
    }
}
