import AMQP
import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import PostgresNIO

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Per queue: depth, consumers, oldest message age; per job type: rates and outcomes (from the ledger).")
    @OptionGroup var options: GlobalOptions
    @Option(help: "Outcomes of the jobs finished within this window.") var window = AgeArgument(seconds: 3600)
    @Flag(help: "Also peek at the head of quorum work queues for their oldest age. Each peek counts one delivery of that job against the delivery limit.")
    var peekWorkQueues = false

    func run() async throws {
        let context = try CLIContext.load(options)
        let (topology, peek, windowSeconds) = (context.topology, peekWorkQueues, Int(window.seconds))
        var report = StatsReport(windowSeconds: windowSeconds)
        report.queues = try await context.withBroker { try await StatsReport.queues($0, topology: topology, peekWorkQueues: peek) }
        (report.rates, report.finished, report.open) = try await context.withDatabase {
            try await StatsReport.ledger($0, windowSeconds: windowSeconds, logger: context.logger)
        }
        if options.output == .json { printJSON(report.json) } else { print(report.text) }
    }
}

extension StatsReport {
    var json: [String: Any] {
        [
            "queues": queues.map { row -> [String: Any] in
                ["name": row.name, "kind": row.kind.rawValue, "role": row.role, "exists": row.state != nil,
                 "messages": row.state?.messageCount ?? -1, "consumers": row.state?.consumerCount ?? -1,
                 "oldest_age_seconds": row.oldestAge.map { ($0 * 10).rounded() / 10 } as Any? ?? NSNull(),
                 "oldest_age_note": row.ageNote ?? NSNull()]
            },
            "rates": rates.map { ["queue": $0.queue, "finished_per_second_1m": Double($0.finishedLastMinute) / 60,
                                  "finished_per_second_5m": Double($0.finishedLastFiveMinutes) / 300] },
            "window_seconds": windowSeconds,
            "finished": finished.map(\.json),
            "open": open.map(\.json),
        ]
    }

    var text: String {
        func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: max(n, s.count + 1), withPad: " ", startingAt: 0) }
        var lines = [pad("QUEUE", 28) + pad("MESSAGES", 10) + pad("CONSUMERS", 11) + "OLDEST"]
        for row in queues {
            let messages = row.state.map { String($0.messageCount) } ?? "missing"
            let consumers = row.state.map { String($0.consumerCount) } ?? "-"
            let age = row.oldestAge.map(formatAge) ?? (row.ageNote == "empty" || row.ageNote == "missing" ? "-" : "(\(row.ageNote ?? "-"))")
            lines.append(pad(row.name, 28) + pad(messages, 10) + pad(consumers, 11) + age)
        }
        lines.append("\nRATES (jobs finished per second)")
        if rates.isEmpty { lines.append("  none in the last 5 minutes") }
        for rate in rates {
            lines.append("  " + pad(rate.queue, 10) + String(format: "1m %.1f/s   5m %.1f/s", Double(rate.finishedLastMinute) / 60, Double(rate.finishedLastFiveMinutes) / 300))
        }
        lines.append("\nOUTCOMES (jobs finished in the last \(formatAge(TimeInterval(windowSeconds))))")
        if finished.isEmpty { lines.append("  none") }
        for outcome in finished { lines.append("  " + pad(outcome.type, 22) + pad(outcome.status, 11) + String(outcome.count)) }
        lines.append("\nOPEN (claimed, not finished)")
        if open.isEmpty { lines.append("  none") }
        for outcome in open { lines.append("  " + pad(outcome.type, 22) + pad(outcome.status, 11) + String(outcome.count)) }
        return lines.joined(separator: "\n")
    }
}

extension StatsReport.Outcome {
    var json: [String: Any] { ["queue": queue, "type": type, "status": status, "count": count] }
}
