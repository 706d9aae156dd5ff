import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The timer behind every ``withDeadline`` (and herald-api's wait for a start's decision): one thread per process that fires each deadline
/// that was not cancelled in time, on the monotonic clock.
///
/// A deadline costs a lock, a heap push and a table insert; its cancellation (the usual end:
/// the operation answered) a lock and a table removal. Each one was a `Task.sleep` before,
/// and a cancelled sleep kept its task and its dispatch timer until the sleep's end: with
/// four to six deadlines of 15 s per SMS job, about 35 MB and a tenth of the worker's
/// CPU under load (docs/benchmarks-journal.md). A cancelled entry leaves 16 bytes in the heap until
/// the heap is rebuilt from the live ones, which happens once it holds twice as many.
public final class DeadlineClock: @unchecked Sendable {
    public static let shared = DeadlineClock()

    /// Entries in the heap, cancelled ones included until the heap is rebuilt (tests).
    var heapCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return heap.count
    }

    // Guarded by `mutex`; `condition` is signalled when a new entry is due before the rest.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var heap = DueHeap()
    private var live: [UInt64: (due: UInt64, fire: @Sendable () -> Void)] = [:]
    private var nextID: UInt64 = 0
    private var started = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Calls `fire` on the clock's thread once `delay` has passed, unless ``cancel(_:)`` came first.
    public func schedule(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let due = Self.now() &+ UInt64(clamping: max(delay.nanoseconds, 0))
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "herald-deadlines"
            thread.start()
        }
        if heap.count > 1024, heap.count > 2 * live.count { heap.rebuild(live.map { ($0.value.due, $0.key) }) }
        nextID &+= 1
        live[nextID] = (due, fire)
        heap.push(due: due, id: nextID)
        if heap.firstID == nextID { pthread_cond_signal(condition) }
        return nextID
    }

    /// The deadline will not fire (if it has not already).
    public func cancel(_ id: UInt64) {
        pthread_mutex_lock(mutex)
        live[id] = nil
        pthread_mutex_unlock(mutex)
    }

    /// Deadlines scheduled and not yet fired or cancelled (tests).
    var pending: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return live.count
    }

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            guard let head = heap.first else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            guard let entry = live[head.id] else {
                heap.popFirst()
                continue
            }
            if head.due <= Self.now() {
                heap.popFirst()
                live[head.id] = nil
                pthread_mutex_unlock(mutex)
                entry.fire()
                pthread_mutex_lock(mutex)
                continue
            }
            var until = timespec(tv_sec: Int(head.due / 1_000_000_000), tv_nsec: Int(head.due % 1_000_000_000))
            pthread_cond_timedwait(condition, mutex, &until)
        }
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

/// A binary min-heap of (due, id), ordered by due.
struct DueHeap {
    private var items: [(due: UInt64, id: UInt64)] = []

    var count: Int { items.count }
    var first: (due: UInt64, id: UInt64)? { items.first }
    var firstID: UInt64? { items.first?.id }

    mutating func push(due: UInt64, id: UInt64) {
        items.append((due, id))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].due < items[parent].due else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        siftDown(from: 0)
    }

    mutating func rebuild(_ entries: [(UInt64, UInt64)]) {
        items = entries.map { (due: $0.0, id: $0.1) }
        for index in stride(from: items.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { return }
            let right = left + 1
            let child = right < items.count && items[right].due < items[left].due ? right : left
            guard items[child].due < items[parent].due else { return }
            items.swapAt(child, parent)
            parent = child
        }
    }
}
