import AMQP
import ArgumentParser
import Foundation
import HeraldCore
import PostgresNIO

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Queue depths and consumers; job outcomes from the ledger.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let context = try CLIContext.load(options)
        let topology = context.topology
        let queues: [(String, AMQPQueueState?)] = try await context.withBroker { connection in
            var out: [(String, AMQPQueueState?)] = []
            for queue in topology.all.queues.map(\.name) { out.append((queue, try await connection.queueState(queue))) }
            return out
        }
        let outcomes: [(String, String, Int)] = try await context.withDatabase { client in
            let rows = try await client.query("SELECT queue, status, count(*)::bigint FROM herald.job_runs GROUP BY 1, 2 ORDER BY 1, 2")
            var out: [(String, String, Int)] = []
            for try await (queue, status, count) in rows.decode((String, String, Int).self) { out.append((queue, status, count)) }
            return out
        }
        if options.output == .json {
            printJSON([
                "queues": queues.map { ["name": $0.0, "messages": $0.1?.messageCount ?? -1, "consumers": $0.1?.consumerCount ?? -1, "exists": $0.1 != nil] },
                "jobs": outcomes.map { ["queue": $0.0, "status": $0.1, "count": $0.2] },
            ])
            return
        }
        print("QUEUE".padding(toLength: 34, withPad: " ", startingAt: 0) + "MESSAGES  CONSUMERS")
        for (name, state) in queues {
            let messages = state.map { String($0.messageCount) } ?? "missing"
            let consumers = state.map { String($0.consumerCount) } ?? "-"
            print(name.padding(toLength: 34, withPad: " ", startingAt: 0) + messages.padding(toLength: 10, withPad: " ", startingAt: 0) + consumers)
        }
        print("\nJOBS (ledger)")
        for (queue, status, count) in outcomes { print("  \(queue.padding(toLength: 10, withPad: " ", startingAt: 0)) \(status.padding(toLength: 10, withPad: " ", startingAt: 0)) \(count)") }
    }
}
