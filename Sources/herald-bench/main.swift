import Foundation
import HeraldCore
import Logging

// herald-bench [COUNT]: the job runner end to end next to a raw broker baseline, in one
// invocation, so the figures are ratios on the same machine at the same moment; then the
// cleanup of BENCH_CLEANUP_ACCOUNTS accounts (default 1,000,000; 0 skips it), with sign-in
// latency during the run next to sign-in latency without it. BENCH_ONLY=sms|cleanup runs one.
let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
let environment = ProcessInfo.processInfo.environment
let only = environment["BENCH_ONLY"]
let cleanupAccounts = environment["BENCH_CLEANUP_ACCOUNTS"].flatMap(Int.init) ?? 1_000_000
let cleanupWorkers = environment["BENCH_CLEANUP_WORKERS"].flatMap(Int.init) ?? 2
let (loaded, _) = try HeraldConfiguration.load(path: nil)
var configuration = loaded
configuration.amqp.namespace = "bench\(UUID().uuidString.prefix(6).lowercased())"
configuration.http.enabled = false
var logger = Logger(label: "herald-bench")
logger.logLevel = .error

func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }

if only == nil || only == "sms" {
    let baseline = try await brokerBaseline(count: count, configuration: configuration, logger: logger)
    var results = [baseline]
    for workers in [1, 2] {
        results.append(try await runnerEndToEnd(count: count, workers: workers, configuration: configuration, logger: logger))
    }
    print("\nherald-bench: \(count) messages each, prefetch \(configuration.amqp.prefetch), \(configuration.amqp.queueType.rawValue) queues, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print(pad("run", 46) + pad("msg/s", 10) + pad("p50 ms", 9) + pad("p99 ms", 9) + "vs baseline")
    for result in results {
        let ratio = result.rate / max(baseline.rate, 1)
        print(pad(result.name, 46) + pad(String(format: "%.0f", result.rate), 10) + pad(String(format: "%.1f", result.p50), 9)
              + pad(String(format: "%.1f", result.p99), 9) + String(format: "%.2f", ratio))
    }
}

if (only == nil || only == "cleanup") && cleanupAccounts > 0 {
    let result = try await CleanupBenchmark(accounts: cleanupAccounts, workers: cleanupWorkers, configuration: configuration, logger: logger).run()
    print("\nherald-bench cleanup: \(result.accounts) accounts, \(result.eligible) eligible, \(cleanupWorkers) workers, batch \(configuration.cleanup.batchSize), rate limit off")
    print(String(format: "load (generate_series): %.1f s", result.loadSeconds))
    print(String(format: "deleted %d accounts in %.1f s: %.0f accounts/s (%@ 1,000,000 in %.0f s)", result.deleted, result.runSeconds,
                 result.deletedPerSecond, "at this rate", 1_000_000 / max(result.deletedPerSecond, 1)))
    print(pad("sign-in updates", 28) + pad("count", 9) + pad("p50 ms", 9) + pad("p99 ms", 9) + pad("max ms", 9) + "p99 vs baseline")
    for (name, latencies) in [("without a run (baseline)", result.baseline), ("during the run", result.during)] {
        print(pad(name, 28) + pad(String(latencies.count), 9) + pad(String(format: "%.2f", latencies.p50), 9)
              + pad(String(format: "%.2f", latencies.p99), 9) + pad(String(format: "%.1f", latencies.max), 9)
              + String(format: "%.2f", latencies.p99 / max(result.baseline.p99, 0.001)))
    }
}
