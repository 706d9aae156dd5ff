import Foundation
import HeraldStubs
import Synchronization

/// Collects latencies and the time span of a benchmark run.
final class Stopwatch: Sendable {
    private struct State {
        var started: [String: ContinuousClock.Instant] = [:]
        var latencies: [Duration] = []
        var first: ContinuousClock.Instant?
        var last: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    func start(_ id: String) {
        let now = ContinuousClock.now
        state.withLock {
            $0.started[id] = now
            if $0.first == nil { $0.first = now }
        }
    }

    /// Returns how many have finished.
    @discardableResult
    func finish(_ id: String) -> Int {
        let now = ContinuousClock.now
        return state.withLock {
            if let begin = $0.started.removeValue(forKey: id) { $0.latencies.append(now - begin) }
            $0.last = now
            return $0.latencies.count
        }
    }

    var count: Int { state.withLock { $0.latencies.count } }

    func result(_ name: String) -> BenchResult {
        state.withLock { state in
            let sorted = state.latencies.sorted()
            func percentile(_ p: Double) -> Double {
                guard !sorted.isEmpty else { return 0 }
                return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))].milliseconds
            }
            let span = (state.last ?? .now) - (state.first ?? .now)
            return BenchResult(name: name, count: sorted.count, seconds: span.seconds,
                               p50: percentile(0.50), p99: percentile(0.99))
        }
    }
}

struct BenchResult {
    var name: String
    var count: Int
    var seconds: Double
    var p50: Double
    var p99: Double
    /// CPU seconds per component during the run (``CPUMeter``), when measured.
    var cpu: CPUUsage?
    /// Each worker process's memory at the end of the run (process runs only).
    var memory: [ProcessMemory] = []
    /// The top statements of the run (BENCH_STATEMENTS=1, SMS runs only).
    var statements: [StatementStats] = []
    var rate: Double { seconds > 0 ? Double(count) / seconds : 0 }
}

extension Duration {
    var milliseconds: Double { seconds * 1000 }
}
