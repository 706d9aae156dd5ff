import Foundation
import HeraldStubs

/// Herald ÷ Go (issue 48): herald-sms, 2 processes, controls on, next to the Go peer and the
/// Swift peer (``Peer``) at 16 and 64 jobs in flight each, all runs of one invocation on the same broker,
/// database, provider stub and load generator (herald-bench), measured by the same
/// ``CPUMeter``. Printed under the run table: jobs/s, the machine's CPU per job (the
/// components' sum: broker, PostgreSQL, worker and herald-bench's load and stub, as issue 48
/// counts it) and each component's, for each run, and Herald's value divided by each peer run's.
struct PeerComparison {
    /// The herald-sms run compared (2 processes, controls on).
    var herald: BenchResult?
    /// The peers' runs, in ``Peer/labels``' order.
    var peers: [BenchResult] = []

    func print() {
        guard let herald, !peers.isEmpty else { return }
        let runs = [herald] + peers
        Swift.print("\nHerald ÷ Go: \(herald.name) next to the Go peer (bench/peers/go) and the Swift peer (the same job on")
        Swift.print("herald-sms's libraries, herald-peer-swift), one invocation: same broker, database,")
        Swift.print("provider stub and load (herald-bench publishes, 32 lanes with confirms); CPU from /proc (CPUMeter)")
        let labels = Peer.labels.prefix(peers.count)
        Swift.print(pad("", 36) + pad("herald-sms", 12) + labels.map { pad($0, 12) }.joined() + labels.map { pad("÷ " + $0, 11) }.joined())
        func row(_ name: String, _ value: (BenchResult) -> Double, digits: Int = 2, ratios: Bool = true) {
            var line = pad(name, 36) + runs.map { pad(String(format: "%.\(digits)f", value($0)), 12) }.joined()
            if ratios { line += peers.map { pad(String(format: "%.2f", value(herald) / max(value($0), 1e-9)), 11) }.joined() }
            Swift.print(line)
        }
        // A run without a CPU reading (none here) prints nan.
        func perJob(_ result: BenchResult, _ part: (CPUUsage) -> Double) -> Double {
            result.cpu.map { part($0.perJobMilliseconds(result.count)) } ?? .nan
        }
        row("jobs/s", \.rate, digits: 0)
        row("CPU ms/job, machine (components)", { perJob($0, \.total) })
        row("  broker", { perJob($0, \.broker) })
        row("  PostgreSQL", { perJob($0, \.postgres) })
        row("  worker", { perJob($0, \.workers) })
        row("  load (herald-bench: publish, stub)", { perJob($0, \.bench) })
        // What else ran meanwhile (a shared machine): every process's CPU (/proc/stat) minus the components', in cores.
        row("cores busy: the components", { ($0.cpu?.total ?? 0) / max($0.cpu?.wall ?? 1, 0.001) }, ratios: false)
        row("cores busy: everything else", { max(($0.cpu?.machine ?? 0) - ($0.cpu?.total ?? 0), 0) / max($0.cpu?.wall ?? 1, 0.001) }, ratios: false)
    }
}
