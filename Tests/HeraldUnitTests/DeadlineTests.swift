import Synchronization
import Testing
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldSMS

@Suite struct DeadlineTests {
    @Test func aFastOperationReturnsItsValue() async throws {
        let value = try await withDeadline(.seconds(5)) { 42 }
        #expect(value == 42)
    }

    /// The operation never ends, so returning at all shows the deadline did not wait for it
    /// (the time limit fails the test if it does); no wall-clock bound, which a loaded machine
    /// can overrun.
    @Test(.timeLimit(.minutes(1))) func anOperationThatNeverAnswersTimesOut() async throws {
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(200)) {
                // Ignores cancellation, like a promise nobody fulfils.
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            }
        }
    }

    /// A deadline of zero can fire before the race has stored its operation's task: the
    /// caller still gets its one answer.
    @Test(.timeLimit(.minutes(1))) func aZeroDeadlineStillAnswersOnce() async throws {
        for _ in 0..<100 {
            await #expect(throws: DeadlineExceeded.self) {
                try await withDeadline(.zero) { await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in } }
            }
        }
    }

    /// The runner's drain timeout cancels its handlers' tasks: the operation (the handler,
    /// sleeping here as a provider call would wait) must hear of it at once, not run on to its
    /// deadline. Before, the operation ran in a task of its own that nobody cancelled: it slept
    /// its 20 s and returned a value to a caller that had been cancelled long before.
    @Test(.timeLimit(.minutes(1))) func cancellingTheCallerCancelsTheOperationAtOnce() async throws {
        let (started, running) = AsyncStream.makeStream(of: Void.self)
        let heard = Mutex(false)
        let caller = Task {
            try await withDeadline(.seconds(50)) {
                running.yield()
                do {
                    try await Task.sleep(for: .seconds(20))
                } catch {
                    heard.withLock { $0 = true }
                    throw error
                }
                return "ran on"
            }
        }
        for await _ in started { break }
        let cancelled = ContinuousClock.now
        caller.cancel()
        let result = await caller.result
        let waited = ContinuousClock.now - cancelled
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(waited < .seconds(10), "the caller waited \(waited) after its cancellation")
        // The operation hears it too (after the caller: the race resumes the caller first).
        let until = ContinuousClock.now + .seconds(5)
        while !heard.withLock({ $0 }), ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(10)) }
        #expect(heard.withLock { $0 }, "the operation was not cancelled")
    }

    /// A caller cancelled before it calls starts no operation and gets `CancellationError`.
    @Test(.timeLimit(.minutes(1))) func anAlreadyCancelledCallerRunsNothing() async throws {
        let ran = Mutex(false)
        let caller = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await withDeadline(.seconds(50)) { ran.withLock { $0 = true } }
        }
        caller.cancel()
        let result = await caller.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(!ran.withLock { $0 })
    }

    @Test func errorsPassThrough() async throws {
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await withDeadline(.seconds(5)) { throw Boom() } }
        #expect(DatabaseAvailability.isUnavailable(DeadlineExceeded(seconds: 1)))
    }
}
