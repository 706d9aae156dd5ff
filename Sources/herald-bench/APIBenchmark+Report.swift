import Foundation

extension APIBenchmark {
    /// The table (req/s, latency, failed answers, CPU ms per request of server · broker · pg ·
    /// client and the cores they kept busy), herald-api's memory, the ratios to the baselines and
    /// issue 32's aims, each as information (a shared machine's figure is no verdict on the code).
    func printReport(_ report: Report) {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        Swift.print("\nherald-bench api: wrk -t \(threads) -c \(connections), \(seconds) s a run (\(warmupSeconds) s of warm-up before each server's first),"
                    + String(format: " paced runs %d s at %.0f req/s; %d cores; load average before %@, after %@", pacedSeconds, pacedRate, cores,
                             report.loadBefore, report.loadAfter))
        Swift.print(pad("run", 52) + pad("req/s", 8) + pad("p50 ms", 8) + pad("p99 ms", 8) + pad("failed", 8)
                    + pad("CPU ms/req server·broker·pg·client", 36) + pad("cores", 7) + "others")
        for row in report.rows {
            let per = { (seconds: Double) in String(format: "%.3f", seconds * 1000 / Double(max(row.requests, 1))) }
            let cpu = [row.server.map(per) ?? "—", per(row.broker), per(row.postgres), per(row.client)].joined(separator: "·")
            let busy = (row.server ?? 0) + row.broker + row.postgres + row.client
            Swift.print(pad(row.name, 52) + pad(String(format: "%.0f", row.rate), 8) + pad(String(format: "%.2f", row.p50), 8)
                        + pad(String(format: "%.2f", row.p99), 8) + pad(String(row.failed), 8) + pad(cpu, 36)
                        + pad(String(format: "%.2f", busy / max(row.wall, 0.001)), 7) + String(format: "%.2f", row.others / max(row.wall, 0.001)))
        }
        Swift.print("server: herald-api's process, or herald-bench serving the bare route; client: wrk, or herald-bench publishing (AMQP baselines).")
        Swift.print("cores: the four's CPU over the wall time; others: the cores every other process of the machine kept busy meanwhile (/proc/stat),")
        Swift.print("(all but the four and herald-bench). The broker's and PostgreSQL's figures include any other client of theirs.")
        Swift.print("Latency: wrk's, write of the request → its answer; AMQP baselines: publish → consumed (broker) or → confirm (enqueue).")
        for note in report.notes { Swift.print(note) }
        for (name, memory) in report.memory {
            Swift.print(String(format: "%@: peak resident (VmHWM) %.1f MB, at the end (VmRSS) %.1f MB = anonymous %.1f + file-backed %.1f (code of the executable and libraries)",
                               name, memory.peakMB, memory.residentMB, memory.anonymousMB, memory.fileMB))
        }

        for row in report.rows where !row.statements.isEmpty {
            BenchStatements.print(row.statements, run: row.name, jobs: row.requests)
        }

        func ratio(_ label: String, _ a: Double?, _ b: Double?) {
            guard let a, let b, b > 0 else { return }
            Swift.print(pad(label, 64) + String(format: "%.2f", a / b))
        }
        let paced = String(format: "paced at %.0f/s", pacedRate)
        let start = report.row("herald-api start (")
        let check = report.row("herald-api check (")
        let bare = report.row("bare Hummingbird route (")
        let enqueue = report.row("HeraldClient enqueue→confirm, 32")
        let brokerBase = report.row("broker publish+consume (")
        let startPaced = report.row("herald-api start, \(paced)")
        let checkPaced = report.row("herald-api check, \(paced)")
        let barePaced = report.row("bare Hummingbird route, \(paced)")
        let enqueuePaced = report.row("HeraldClient enqueue→confirm, \(paced)")
        let decided = report.row("herald-api start with decision (")
        let decidedPaced = report.row("herald-api start with decision, \(paced)")
        Swift.print("\nratios (same invocation):")
        ratio("start with decision req/s ÷ start 202-only req/s (aim ≥ 0.8)", decided?.rate, start?.rate)
        ratio("start with decision p99 ÷ start 202-only p99, \(paced)", decidedPaced?.p99, startPaced?.p99)
        ratio("start req/s ÷ bare route req/s", start?.rate, bare?.rate)
        ratio("check req/s ÷ bare route req/s", check?.rate, bare?.rate)
        ratio("start req/s ÷ HeraldClient enqueue→confirm msg/s", start?.rate, enqueue?.rate)
        ratio("start req/s ÷ broker publish+consume msg/s", start?.rate, brokerBase?.rate)
        ratio("start herald-api CPU ms/req ÷ bare route's server CPU ms/req", start?.server.map { $0 / Double(max(start?.requests ?? 1, 1)) },
              bare?.server.map { $0 / Double(max(bare?.requests ?? 1, 1)) })
        ratio("check herald-api CPU ms/req ÷ bare route's server CPU ms/req", check?.server.map { $0 / Double(max(check?.requests ?? 1, 1)) },
              bare?.server.map { $0 / Double(max(bare?.requests ?? 1, 1)) })
        ratio("start p99 ÷ bare route p99, \(paced)", startPaced?.p99, barePaced?.p99)
        ratio("start p99 ÷ HeraldClient enqueue→confirm p99, \(paced)", startPaced?.p99, enqueuePaced?.p99)
        ratio("check p99 ÷ bare route p99, \(paced)", checkPaced?.p99, barePaced?.p99)

        Swift.print(String(format: "\naims of issue 32 at %.0f req/s (information, not a test):", pacedRate))
        func aim(_ label: String, _ value: Double?, _ limit: Double, _ unit: String) {
            guard let value else { return Swift.print(pad(label, 40) + "not measured") }
            Swift.print(pad(label, 40) + String(format: "%.2f %@ (aim ≤ %.0f %@): %@", value, unit, limit, unit, value <= limit ? "met" : "NOT met"))
        }
        aim("check p99", checkPaced?.p99, 5, "ms")
        aim("start p99", startPaced?.p99, 10, "ms")
        aim("herald-api peak RSS (VmHWM)", report.memory.last?.1.peakMB, 60, "MB")
        Swift.print(String(format: "aims of issue 45 at %.0f req/s (information, not a test):", pacedRate))
        aim("start with decision p99", decidedPaced?.p99, 15, "ms")
        for row in [startPaced, checkPaced, decidedPaced].compactMap({ $0 }) where abs(row.rate - pacedRate) > pacedRate * 0.05 || row.failed > 0 {
            Swift.print(String(format: "note: %@ ran at %.0f req/s with %d failed answers: the aims above are not at the load they name", row.name, row.rate, row.failed))
        }
    }
}
