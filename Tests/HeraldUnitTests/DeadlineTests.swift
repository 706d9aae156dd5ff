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

    @Test func errorsPassThrough() async throws {
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await withDeadline(.seconds(5)) { throw Boom() } }
        #expect(DatabaseAvailability.isUnavailable(DeadlineExceeded(seconds: 1)))
    }
}
