import Synchronization

/// A level-triggered wake-up: ``signal()`` wakes the one waiter, or the next one if none waits.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns on a signal, on `timeout`, or on cancellation. The timeout is a
    /// ``DeadlineClock`` entry, not a sleeping task (a cancelled sleep keeps its timer until
    /// its end); a timeout that fires just as a signal arrives wakes the next wait early once.
    func wait(timeout: Duration) async {
        let deadline = DeadlineClock.shared.schedule(after: timeout) { self.signal() }
        await withTaskCancellationHandler {
            await waitForSignal()
        } onCancel: {
            self.signal()
        }
        DeadlineClock.shared.cancel(deadline)
        state.withLock { $0.pending = false }
    }

    private func waitForSignal() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
