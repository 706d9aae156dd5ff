import Foundation
import HeraldStubs
import HeraldRuntime

/// The table of the broker, runner, sms and processes runs, under the bench database's size
/// (``DatabaseSize``): msg/s, latency, the ratio to the broker baseline (the first row), the CPU
/// per job of each component (``CPUMeter``: broker · PostgreSQL · worker processes ·
/// herald-bench, whose in-process workers are in the last) and the cores they kept busy
/// together; then each process run's worker memory and, with BENCH_STATEMENTS=1, each SMS run's
/// top statements.
func printRuns(_ results: [BenchResult], count: Int, size: DatabaseSize, configuration: HeraldConfiguration) {
    guard let baseline = results.first else { return }
    print("\nherald-bench: \(count) messages each, prefetch \(configuration.amqp.prefetch), \(configuration.amqp.queueType.rawValue) queues, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print("bench database before the runs (rows, estimated): \(size.description)")
    print(pad("run", 50) + pad("msg/s", 8) + pad("p50 ms", 8) + pad("p99 ms", 8) + pad("vs base", 9)
          + pad("CPU ms/job broker·pg·worker·bench", 35) + "cores")
    for result in results {
        let cpu = result.cpu.map { pad($0.perJobCell(result.count), 35) + String(format: "%.2f", $0.total / max($0.wall, 0.001)) } ?? ""
        print(pad(result.name, 50) + pad(String(format: "%.0f", result.rate), 8) + pad(String(format: "%.1f", result.p50), 8)
              + pad(String(format: "%.1f", result.p99), 8) + pad(String(format: "%.2f", result.rate / max(baseline.rate, 1)), 9) + cpu)
    }
    let processRuns = results.filter { !$0.memory.isEmpty }
    if !processRuns.isEmpty {
        print("\nworker memory per process (herald-sms, the Go peer) at the end of each run (VmHWM peak, VmRSS resident; MB = 10⁶ bytes):")
        for result in processRuns { print(pad(result.name, 50) + ProcessMemory.describe(result.memory)) }
    }
    for result in results where !result.statements.isEmpty {
        BenchStatements.print(result.statements, run: result.name, jobs: result.count)
    }
}
