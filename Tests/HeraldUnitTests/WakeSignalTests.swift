import Testing
@testable import HeraldRuntime

/// The runner's and the relay's wake-up: a signal, the timeout or cancellation ends a wait;
/// the time limits fail a wait that does not end.
@Suite struct WakeSignalTests {
    @Test(.timeLimit(.minutes(1))) func aSignalBeforeTheWaitEndsItAtOnce() async {
        let wake = WakeSignal()
        wake.signal()
        let started = ContinuousClock.now
        await wake.wait(timeout: .seconds(600))
        #expect(ContinuousClock.now - started < .seconds(300))
    }

    @Test(.timeLimit(.minutes(1))) func aSignalDuringTheWaitEndsIt() async {
        let wake = WakeSignal()
        async let waited: Void = wake.wait(timeout: .seconds(600))
        try? await Task.sleep(for: .milliseconds(50))
        wake.signal()
        await waited
    }

    @Test(.timeLimit(.minutes(1))) func theTimeoutEndsAWaitNobodySignals() async {
        let wake = WakeSignal()
        let started = ContinuousClock.now
        await wake.wait(timeout: .milliseconds(100))
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }

    @Test(.timeLimit(.minutes(1))) func cancellationEndsTheWait() async {
        let wake = WakeSignal()
        let waiter = Task { await wake.wait(timeout: .seconds(600)) }
        try? await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        await waiter.value
        // Already cancelled: the next wait of that task returns at once too.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await wake.wait(timeout: .seconds(600))
        }
        await cancelled.value
    }
}
