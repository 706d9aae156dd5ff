@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Synchronization
import Testing

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

    /// A caller cancelled before it calls still starts the operation, cancelled from its
    /// first instruction: a cleanup that ignores cancellation runs; work that checks it stops.
    @Test(.timeLimit(.minutes(1))) func anAlreadyCancelledCallersOperationRunsCancelled() async throws {
        let sawCancelled = Mutex<Bool?>(nil)
        let caller = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await withDeadline(.seconds(50)) { sawCancelled.withLock { $0 = Task.isCancelled }; return 7 }
        }
        caller.cancel()
        #expect(try await caller.value == 7)
        #expect(sawCancelled.withLock { $0 } == true)
    }

    /// An operation that stops at the cancellation but finishes what it must first (a handler
    /// writing the record of a send that happened) ends with its own result, not the caller's
    /// cancellation: the runner does not requeue a job whose record is still being written.
    @Test(.timeLimit(.minutes(1))) func aCancelledCallerGetsTheResultOfWorkThatFinishes() async throws {
        let (started, running) = AsyncStream.makeStream(of: Void.self)
        let caller = Task {
            try await withDeadline(.seconds(50)) { () async throws -> String in
                running.yield()
                try? await Task.sleep(for: .seconds(20))
                // Cancelled: the record is written all the same (a database write of 300 ms).
                try? await Task { try await Task.sleep(for: .milliseconds(300)) }.value
                return "recorded"
            }
        }
        for await _ in started { break }
        caller.cancel()
        #expect(try await caller.value == "recorded")
    }

    /// An operation that ignores the cancellation is given up after the grace, not the deadline.
    @Test(.timeLimit(.minutes(1))) func anOperationThatIgnoresTheCancellationIsGivenUpAfterTheGrace() async throws {
        let (started, running) = AsyncStream.makeStream(of: Void.self)
        let caller = Task {
            try await withDeadline(.seconds(50), afterCancellation: .milliseconds(500)) { () async throws -> String in
                running.yield()
                try? await Task { try await Task.sleep(for: .seconds(20)) }.value
                return "ran on"
            }
        }
        for await _ in started { break }
        let cancelled = ContinuousClock.now
        caller.cancel()
        let result = await caller.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(ContinuousClock.now - cancelled < .seconds(5))
    }

    @Test func errorsPassThrough() async throws {
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await withDeadline(.seconds(5)) { throw Boom() } }
        #expect(DatabaseAvailability.isUnavailable(DeadlineExceeded(seconds: 1)))
    }
}
