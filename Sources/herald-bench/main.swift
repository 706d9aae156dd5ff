import Foundation
import HeraldCore
import Logging

// herald-bench [COUNT]: the job runner end to end next to a raw broker baseline, in one
// invocation, so the figures are ratios on the same machine at the same moment.
let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
let (loaded, _) = try HeraldConfiguration.load(path: nil)
var configuration = loaded
configuration.amqp.namespace = "bench\(UUID().uuidString.prefix(6).lowercased())"
configuration.http.enabled = false
var logger = Logger(label: "herald-bench")
logger.logLevel = .error

let baseline = try await brokerBaseline(count: count, configuration: configuration, logger: logger)
var results = [baseline]
// herald-bench COUNT [runner|sms|processes]: all of them by default, the baseline always.
let only = CommandLine.arguments.dropFirst(2).first
if only == nil || only == "runner" {
    for workers in [1, 2] {
        results.append(try await runnerEndToEnd(count: count, workers: workers, configuration: configuration, logger: logger))
    }
}
if only == nil || only == "sms" {
    for workers in [1, 2] {
        results.append(try await smsEndToEnd(count: count, workers: workers, configuration: configuration, logger: logger))
    }
}
if only == nil || only == "processes" {
    for processes in [1, 2, 4] {
        results.append(try await smsProcesses(count: count, processes: processes, configuration: configuration, logger: logger))
    }
}

func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }
print("\nherald-bench: \(count) messages each, prefetch \(configuration.amqp.prefetch), \(configuration.amqp.queueType.rawValue) queues, \(ProcessInfo.processInfo.activeProcessorCount) cores")
print(pad("run", 46) + pad("msg/s", 10) + pad("p50 ms", 9) + pad("p99 ms", 9) + "vs baseline")
for result in results {
    let ratio = result.rate / max(baseline.rate, 1)
    print(pad(result.name, 46) + pad(String(format: "%.0f", result.rate), 10) + pad(String(format: "%.1f", result.p50), 9)
          + pad(String(format: "%.1f", result.p99), 9) + String(format: "%.2f", ratio))
}
