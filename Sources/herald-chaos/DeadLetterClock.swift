import AMQP
import Foundation
import HeraldRuntime
import HeraldStubs

/// Times a drain of malformed messages from outside, the same way for the bare consumers
/// (``PoisonFloor``) and for Herald's workers: the backlog is on the work queues before any
/// consumer takes from it; the clock starts when every expected consumer is on its queue (for
/// Herald's, held stopped until then, so that they begin together) and stops when the
/// dead-letter queues hold every message; what arrived in between, over the time between, is
/// the cost per message. Start-up (a worker process loading, connecting) is outside the
/// window, and nothing in it depends on how the consumers report. The CPU each
/// component spent inside the window is read from /proc (``CPUMeter``): the broker, the
/// worker processes given, and the harness itself (where the bare consumers run).
struct DeadLetterClock {
    let connection: AMQPConnection
    let topology: HeraldTopology
    /// How often the queues are asked (a passive queue.declare each).
    var interval: Duration = .milliseconds(5)

    struct Measurement: Sendable {
        /// Messages dead-lettered inside the window, of `expected`.
        var messages: Int
        var expected: Int
        var seconds: Double
        /// CPU seconds per component inside the window (`bench` is the harness).
        var cpu: CPUUsage
        var perMessage: Double { seconds / Double(max(messages, 1)) }
        /// The window held most of the drain and lasted at least ``minimumWindow``. The short
        /// run's few hundred messages are mostly settled before every consumer is up, so its
        /// windows time next to nothing.
        var timesTheDrain: Bool { seconds >= Self.minimumWindow.seconds && messages * 2 >= expected }
        /// Each end of a window is known to within one poll (5 ms), so 250 ms keeps the time
        /// per message within 4 %; the CPU figures beside it (/proc counts 10 ms ticks) are
        /// coarser, but they are reported, not judged. (It was 0.5 s: on a quiet machine the
        /// floors and Herald then drained 10,000 messages in under half a second, and the full
        /// run failed for being fast.)
        static let minimumWindow = Duration.milliseconds(250)
        /// "108 µs each (CPU per message: broker 150 · workers 80 · harness 5 µs)", or why the
        /// window timed nothing.
        var summary: String {
            guard timesTheDrain else { return String(format: "not timed (%d of %d messages in a %.0f ms window)", messages, expected, seconds * 1000) }
            let scale = 1e6 / Double(max(messages, 1))
            return String(format: "%.0f µs each (CPU per message: broker %.0f · workers %.0f · harness %.0f µs)",
                          perMessage * 1e6, cpu.broker * scale, cpu.workers * scale, cpu.bench * scale)
        }
    }

    /// Times the drain of `expected` messages by `consumers` (one entry per consumer, by
    /// kind), which the caller has just started or is starting; `workers` are their processes
    /// when they are not the harness's own. `opening` runs as the window opens: a held start
    /// (consumers already on their queues, their processes stopped) lets them go there.
    func measure(expected: Int, consumers: [JobKind], workers: [pid_t] = [], timeout: Duration,
                 opening: () -> Void = {}) async throws -> Measurement {
        let deadLetterQueues = Set(consumers).map(topology.deadLetterQueue)
        let deadline = ContinuousClock.now + timeout
        // All consumers on their queues: the window opens.
        try await waitUntilConsuming(consumers, timeout: timeout)
        // The /proc scan first: consumers already at work (the floors') then settle nothing
        // that is counted without its time. What is dead-lettered by the time the queues are
        // asked is left out, and the clock starts after asking, as the held workers go.
        let meter: CPUMeter
        do { meter = try CPUMeter.start(workerPIDs: workers) } catch { throw ChaosFailure("\(error)") }
        let before = try await deadLettered(deadLetterQueues)
        let opened = ContinuousClock.now
        opening()
        var arrived = before
        while arrived < expected {
            guard ContinuousClock.now < deadline else { throw ChaosFailure("\(arrived) of \(expected) malformed messages dead-lettered within \(timeout)") }
            try await Task.sleep(for: interval)
            arrived = try await deadLettered(deadLetterQueues)
        }
        let seconds = (ContinuousClock.now - opened).seconds
        let cpu: CPUUsage
        do { cpu = try meter.stop() } catch { throw ChaosFailure("\(error)") }
        return Measurement(messages: arrived - before, expected: expected, seconds: seconds, cpu: cpu)
    }

    /// Returns once every one of `consumers` (one entry per consumer, by kind) is on its queue.
    func waitUntilConsuming(_ consumers: [JobKind], timeout: Duration) async throws {
        let wanted = Dictionary(consumers.map { ($0, 1) }, uniquingKeysWith: +)
        let deadline = ContinuousClock.now + timeout
        while try await !allConsuming(wanted) {
            guard ContinuousClock.now < deadline else { throw ChaosFailure("the consumers did not all start within \(timeout)") }
            try await Task.sleep(for: interval)
        }
    }

    private func allConsuming(_ wanted: [JobKind: Int]) async throws -> Bool {
        for (kind, count) in wanted where (try await connection.queueState(topology.workQueue(kind))?.consumerCount ?? 0) < count { return false }
        return true
    }

    private func deadLettered(_ queues: [String]) async throws -> Int {
        var total = 0
        for queue in queues { total += try await connection.queueState(queue)?.messageCount ?? 0 }
        return total
    }
}
