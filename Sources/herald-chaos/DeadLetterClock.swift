import AMQP
import Foundation
import HeraldRuntime
import HeraldStubs

/// Times a drain of malformed messages from outside, the same way for the bare consumers
/// (``PoisonFloor``) and for Herald's workers: the backlog is on the work queues before any
/// consumer starts; the clock starts when every expected consumer is on its queue and stops
/// when the dead-letter queues hold every message; what arrived in between, over the time
/// between, is the cost per message. Start-up (a worker process loading, connecting) is
/// outside the window, and nothing in it depends on how the consumers report. The CPU each
/// component spent inside the window is read from /proc (``CPUMeter``): the broker, the
/// worker processes given, and the harness itself (where the bare consumers run).
struct DeadLetterClock {
    let connection: AMQPConnection
    let topology: HeraldTopology
    /// How often the queues are asked (a passive queue.declare each).
    var interval: Duration = .milliseconds(5)

    struct Measurement: Sendable {
        /// Messages dead-lettered inside the window.
        var messages: Int
        var seconds: Double
        /// CPU seconds per component inside the window (`bench` is the harness).
        var cpu: CPUUsage
        var perMessage: Double { seconds / Double(max(messages, 1)) }
        /// "broker 150 · workers 80 · harness 5 µs": CPU per message inside the window.
        var cpuPerMessage: String {
            let scale = 1e6 / Double(max(messages, 1))
            return String(format: "broker %.0f · workers %.0f · harness %.0f µs", cpu.broker * scale, cpu.workers * scale, cpu.bench * scale)
        }
    }

    /// Times the drain of `expected` messages by `consumers` (one entry per consumer, by
    /// kind), which the caller has just started or is starting; `workers` are their processes
    /// when they are not the harness's own.
    func measure(expected: Int, consumers: [JobKind], workers: [pid_t] = [], timeout: Duration) async throws -> Measurement {
        let wanted = Dictionary(consumers.map { ($0, 1) }, uniquingKeysWith: +)
        let deadLetterQueues = Set(consumers).map(topology.deadLetterQueue)
        let deadline = ContinuousClock.now + timeout
        // All consumers on their queues: the window opens.
        while try await !allConsuming(wanted) {
            guard ContinuousClock.now < deadline else { throw ChaosFailure("the consumers did not all start within \(timeout)") }
            try await Task.sleep(for: interval)
        }
        let meter: CPUMeter
        do { meter = try CPUMeter.start(workerPIDs: workers) } catch { throw ChaosFailure("\(error)") }
        let (opened, before) = (ContinuousClock.now, try await deadLettered(deadLetterQueues))
        var arrived = before
        while arrived < expected {
            guard ContinuousClock.now < deadline else { throw ChaosFailure("\(arrived) of \(expected) malformed messages dead-lettered within \(timeout)") }
            try await Task.sleep(for: interval)
            arrived = try await deadLettered(deadLetterQueues)
        }
        let seconds = (ContinuousClock.now - opened).seconds
        let cpu: CPUUsage
        do { cpu = try meter.stop() } catch { throw ChaosFailure("\(error)") }
        return Measurement(messages: arrived - before, seconds: seconds, cpu: cpu)
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
