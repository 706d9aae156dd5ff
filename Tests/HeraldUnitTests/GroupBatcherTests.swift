import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Synchronization
import Testing

/// The group commit of claims and outcomes: batches in order, and a batch that never
/// answers (a database call hung after a PostgreSQL restart) must not hold the later ones.
@Suite struct GroupBatcherTests {
    @Test func concurrentRequestsAreAnsweredInOrderInGroups() async throws {
        let sizes = Mutex<[Int]>([])
        let batcher = GroupBatcher<Int, Int>(maxBatch: 8, timeout: .seconds(5), onBatch: { n in sizes.withLock { $0.append(n) } }) { inputs in
            try await Task.sleep(for: .milliseconds(20))
            return inputs.map { .success($0 * 10) }
        }
        let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for n in 0..<40 { group.addTask { (n, try await batcher.submit(n)) } }
            return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 40 && answers.allSatisfy { $0.value == $0.key * 10 })
        #expect(sizes.withLock { $0.reduce(0, +) } == 40)
        #expect(sizes.withLock { $0.allSatisfy { $0 <= 8 } && $0.count < 40 }, "grouped, at most 8 a batch")
    }

    @Test func aBatchThatNeverAnswersFailsAndTheNextOneRuns() async throws {
        let calls = Mutex(0)
        let batcher = GroupBatcher<Int, Int>(maxBatch: 4, timeout: .milliseconds(300)) { inputs in
            if calls.withLock({ c in defer { c += 1 }; return c }) == 0 {
                // The first batch hangs, ignoring cancellation, like a query on a dead connection.
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            }
            return inputs.map { .success($0) }
        }
        await #expect(throws: DeadlineExceeded.self) { try await batcher.submit(1) }
        #expect(try await batcher.submit(2) == 2, "the batcher moved on past the hung batch")
    }
}
