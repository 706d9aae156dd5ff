import Foundation
import HeraldCleanup
import HeraldRuntime
import Logging

extension CleanupBenchmark {
    /// `BENCH_ONLY=cleanup`: the configured pacing (`cleanup.pace.*`, the default unless the
    /// configuration changes it) and pacing off, each on a fresh population with its own
    /// sign-in baseline; then, with `BENCH_CLEANUP_SWEEP=1`, every batch size × workers ×
    /// busy share of the sweep (`BENCH_CLEANUP_SWEEP_ACCOUNTS` accounts each, default
    /// `accounts`), as the markdown table of docs/benchmarks-journal.md.
    static func report(accounts: Int, workers: Int, environment: [String: String], configuration: HeraldConfiguration, logger: Logger) async throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let configured = configuration.cleanup.pace
        print("\nherald-bench cleanup: \(accounts) accounts (half eligible), \(workers) workers, batch \(configuration.cleanup.batchSize), rate limit off, \(cores) cores")
        var results: [(String, Result)] = []
        for (name, pace) in [("pacing as configured", configured), ("pacing off", CleanupPace.off)] {
            let bench = CleanupBenchmark(accounts: accounts, workers: workers, batchSize: configuration.cleanup.batchSize, pace: pace,
                                         configuration: configuration, logger: logger)
            results.append(("\(name) (\(describe(pace)))", try await bench.run()))
        }
        printTable(results)

        guard environment["BENCH_CLEANUP_SWEEP"] == "1" else { return }
        let sweepAccounts = environment["BENCH_CLEANUP_SWEEP_ACCOUNTS"].flatMap(Int.init) ?? accounts
        print("\nsweep: \(sweepAccounts) accounts each (half eligible), target_batch_ms off, rate limit off")
        print("| batch | workers | busy % | deleted/s | 1,000,000 in | sign-in p50 / p99 ms idle | during | p99 × | paused s | PG µs/account |")
        print("| ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |")
        for batch in [250, 1_000, 4_000] {
            for sweepWorkers in [1, 2] {
                for busy in [100, 50, 25] {
                    let pace = CleanupPace(maxBusyPercent: busy, targetBatchMilliseconds: 0)
                    let result = try await CleanupBenchmark(accounts: sweepAccounts, workers: sweepWorkers, batchSize: batch, pace: pace,
                                                            baselineSeconds: 3, configuration: configuration, logger: logger).run()
                    print(String(format: "| %d | %d | %d | %.0f | %.0f s | %.2f / %.2f | %.2f / %.2f | %.1f | %.1f | %@ |",
                                 batch, sweepWorkers, busy, result.deletedPerSecond, 1_000_000 / max(result.deletedPerSecond, 1),
                                 result.baseline.p50, result.baseline.p99, result.during.p50, result.during.p99, result.p99Ratio,
                                 result.pausedSeconds, result.postgresMicrosecondsPerAccount.map { String(format: "%.0f", $0) } ?? "-"))
                }
            }
        }
    }

    static func describe(_ pace: CleanupPace) -> String {
        pace.isOff ? "no pauses"
            : "busy \(pace.maxBusyPercent) %, target \(pace.targetBatchMilliseconds == 0 ? "off" : "\(pace.targetBatchMilliseconds) ms")"
    }

    private static func printTable(_ results: [(String, Result)]) {
        for (name, result) in results {
            print("\n\(name): load \(String(format: "%.1f", result.loadSeconds)) s")
            print(String(format: "deleted %d of %d eligible in %.1f s: %.0f accounts/s (1,000,000 would take %.0f s); %d batches, paused %.1f s in all",
                         result.deleted, result.eligible, result.runSeconds, result.deletedPerSecond,
                         1_000_000 / max(result.deletedPerSecond, 1), result.batches, result.pausedSeconds))
            if let cpu = result.cpu {
                print(String(format: "CPU during the run: PostgreSQL %.1f s (%.0f µs per deleted account), herald-bench (workers and sign-in clients) %.1f s, over %.1f s",
                             cpu.postgres, result.postgresMicrosecondsPerAccount ?? 0, cpu.bench, cpu.wall))
            }
            print(pad("sign-in updates", 28) + pad("count", 9) + pad("p50 ms", 9) + pad("p99 ms", 9) + pad("max ms", 9) + "p99 vs baseline")
            for (label, latencies) in [("without a run (baseline)", result.baseline), ("during the run", result.during)] {
                print(pad(label, 28) + pad(String(latencies.count), 9) + pad(String(format: "%.2f", latencies.p50), 9)
                      + pad(String(format: "%.2f", latencies.p99), 9) + pad(String(format: "%.1f", latencies.max), 9)
                      + String(format: "%.2f", latencies.p99 / max(result.baseline.p99, 0.001)))
            }
        }
    }
}
