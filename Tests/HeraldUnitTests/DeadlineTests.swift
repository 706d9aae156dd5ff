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

    @Test func anOperationThatNeverAnswersTimesOut() async throws {
        let started = ContinuousClock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(200)) {
                // Ignores cancellation, like a promise nobody fulfils.
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            }
        }
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test func errorsPassThrough() async throws {
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await withDeadline(.seconds(5)) { throw Boom() } }
        #expect(DatabaseAvailability.isUnavailable(DeadlineExceeded(seconds: 1)))
    }
}
