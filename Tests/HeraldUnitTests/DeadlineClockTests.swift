import Synchronization
import Testing
@testable import HeraldRuntime

/// The timer behind ``withDeadline``: each test has its own clock (and thread), so counts
/// are its own.
@Suite struct DeadlineClockTests {
    @Test(.timeLimit(.minutes(1))) func deadlinesFireInTheOrderTheyAreDue() async throws {
        let clock = DeadlineClock()
        let fired = Mutex<[Int]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            // Far enough apart that a preempted test thread cannot reorder them.
            for (label, ms) in [(3, 900), (1, 300), (2, 600)] {
                _ = clock.schedule(after: .milliseconds(ms)) {
                    let count = fired.withLock { $0.append(label); return $0.count }
                    if count == 3 { done.resume() }
                }
            }
        }
        #expect(fired.withLock { $0 } == [1, 2, 3])
        #expect(clock.pending == 0)
    }

    @Test(.timeLimit(.minutes(1))) func aCancelledDeadlineNeverFires() async throws {
        let clock = DeadlineClock()
        let fired = Mutex<[String]>([])
        let cancelled = clock.schedule(after: .milliseconds(300)) { fired.withLock { $0.append("cancelled") } }
        clock.cancel(cancelled)
        #expect(clock.pending == 0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = clock.schedule(after: .milliseconds(600)) {
                fired.withLock { $0.append("kept") }
                done.resume()
            }
        }
        #expect(fired.withLock { $0 } == ["kept"])
    }

    /// Cancelled entries wait in the heap for their due time only until the heap holds twice
    /// the live ones: then it is rebuilt from those, and a live one still fires.
    @Test(.timeLimit(.minutes(1))) func cancelledEntriesDoNotAccumulate() async {
        let clock = DeadlineClock()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = clock.schedule(after: .milliseconds(500)) { done.resume() }
            for _ in 0..<10_000 { clock.cancel(clock.schedule(after: .seconds(60)) {}) }
            let live = (0..<100).map { _ in clock.schedule(after: .seconds(60)) {} }
            #expect(clock.pending == 101)
            #expect(clock.heapCount <= 2 * 1024 + 2)
            for id in live { clock.cancel(id) }
        }
        #expect(clock.pending == 0)
    }

    @Test func theHeapPopsInDueOrder() {
        var heap = DueHeap()
        let dues = (0..<500).map { _ in UInt64.random(in: 0..<1_000) }
        for (id, due) in dues.enumerated() { heap.push(due: due, id: UInt64(id)) }
        var popped: [UInt64] = []
        while let head = heap.first { popped.append(head.due); heap.popFirst() }
        #expect(popped == dues.sorted())

        heap.rebuild(dues.enumerated().map { (UInt64($0.element), UInt64($0.offset)) })
        popped = []
        while let head = heap.first { popped.append(head.due); heap.popFirst() }
        #expect(popped == dues.sorted())
    }

    /// "Forever" saturates instead of overflowing.
    @Test func anEndlessDeadlineIsAccepted() {
        let clock = DeadlineClock()
        clock.cancel(clock.schedule(after: .seconds(Int64.max)) {})
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
        #expect(clock.pending == 0)
    }
}
