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

/// Whichever of the operation and the timer finishes first resumes the continuation and
/// cancels the other.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }
    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        state = Mutex(State(continuation: continuation))
    }

    func start(timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) {
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            self.finish(result, cancel: \.timer)
        }
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.finish(.failure(DeadlineExceeded(seconds: timeout.components.seconds)), cancel: \.work)
        }
        let settled = state.withLock { state -> Bool in
            state.work = work
            state.timer = timer
            return state.continuation == nil
        }
        if settled {
            work.cancel()
            timer.cancel()
        }
    }

    private func finish(_ result: Result<T, any Error>, cancel other: KeyPath<State, Task<Void, Never>?>) {
        let (continuation, loser) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
            defer { state.continuation = nil }
            return (state.continuation, state[keyPath: other])
        }
        guard let continuation else { return }
        loser?.cancel()
        continuation.resume(with: result)
    }
}
