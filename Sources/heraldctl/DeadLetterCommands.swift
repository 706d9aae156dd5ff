import AMQP
import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime

struct DeadLetters: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq", abstract: "Inspect, replay and purge dead-lettered jobs.",
        subcommands: [List.self, Show.self, Replay.self, Purge.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List dead letters with their reasons (they stay in the queue, in order).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var filter: DeadLetterFilter

        func run() async throws {
            let context = try CLIContext.load(options)
            let queue = context.topology.deadLetterQueue(filter.kind.kind)
            let (filter, progress, now) = (self.filter, ScanProgress(verb: "listed", output: options.output), Date())
            let (letters, result) = try await context.withBroker { connection in
                var letters: [DeadLetter] = []
                let result = try await scanDeadLetters(connection, queue: queue, limit: filter.limit, scan: filter.scanBudget, progress: progress,
                                                       matches: { filter.matches($0, now: now) }) { _, letter in
                    letters.append(letter)
                    return .keep
                }
                return (letters, result)
            }
            if options.output == .json {
                printJSON(["queue": queue, "scanned": result.scanned, "letters": letters.map(\.json)])
            } else {
                if letters.isEmpty { print("no matching dead letters in \(queue) (\(result.scanned) looked at)") }
                for letter in letters { print(letter.line(now: now)) }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one dead letter: its headers and its body (personal data masked unless --raw).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Worker kind: sms, email, push, cleanup or apple.") var kind: JobKindArgument
        @Flag(help: "Print the body as received, phone numbers and addresses in clear.") var raw = false
        @Option(help: "The letter at this position from the head (1 = oldest), as `dlq list` shows a letter without a message id.") var position: Int?
        @Argument(help: "The message id (or give --position).") var messageID: String?

        func validate() throws {
            guard (messageID == nil) != (position == nil) else { throw ValidationError("give a message id or --position, not both") }
            if let position, position <= 0 { throw ValidationError("--position must be positive") }
        }

        func run() async throws {
            let context = try CLIContext.load(options)
            let queue = context.topology.deadLetterQueue(kind.kind)
            let (id, position, raw, progress) = (messageID, position, raw, ScanProgress(verb: "found", output: options.output))
            let found: DeadLetterDetail? = try await context.withBroker { connection in
                var found: DeadLetterDetail?
                _ = try await scanDeadLetters(connection, queue: queue, limit: 1, scan: position, progress: progress,
                                              matches: { letter in position.map { letter.position == $0 } ?? (letter.messageID == id) }) { delivery, letter in
                    found = DeadLetterDetail(delivery: delivery, letter: letter, raw: raw)
                    return .keep
                }
                return found
            }
            guard let found else {
                throw CLIExit.fail(position.map { "no dead letter at position \($0) in \(queue)" } ?? "no dead letter with message id \(id ?? "") in \(queue)")
            }
            if options.output == .json { printJSON(found.json) } else { print(found.text) }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put matching dead letters back on their work queue, with fresh attempts.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var filter: DeadLetterFilter

        func run() async throws {
            let context = try CLIContext.load(options)
            let topology = context.topology
            let kind = filter.kind.kind
            let queue = topology.deadLetterQueue(kind)
            let (filter, progress, now) = (self.filter, ScanProgress(verb: "replayed", output: options.output), Date())
            let result = try await context.withDatabase { client in
                try await context.withBroker { connection in
                    let ledger = JobLedger(client: client, logger: context.logger)
                    return try await scanDeadLetters(connection, queue: queue, limit: filter.limit, scan: filter.scanBudget, progress: progress,
                                                     matches: { filter.matches($0, now: now) }) { delivery, letter in
                        if let id = delivery.properties.messageID { try await ledger.reopen(messageIDs: [id]) }
                        var properties = delivery.properties
                        properties.headers = properties.headers.filter { !$0.key.hasPrefix("x-herald-") && $0.key != "x-death" && !$0.key.hasPrefix("x-first-death") && !$0.key.hasPrefix("x-last-death") }
                        properties.headers["x-herald-replayed-at"] = .timestamp(Date())
                        try await connection.publish(body: delivery.body, exchange: topology.jobsExchange, routingKey: letter.routingKey(default: kind), properties: properties)
                        return .take
                    }
                }
            }
            if options.output == .json {
                printJSON(["replayed": result.taken, "scanned": result.scanned, "queue": queue])
            } else {
                print("replayed \(result.taken) job(s) from \(queue) (\(result.scanned) looked at)")
            }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete dead letters for good: every one of a kind, or those matching the filters.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var filter: DeadLetterFilter
        @Flag(help: "Required: this cannot be undone.") var yes = false

        func run() async throws {
            guard yes else { throw CLIExit.fail("purge deletes dead letters for good; add --yes", code: .usage) }
            let context = try CLIContext.load(options)
            let queue = context.topology.deadLetterQueue(filter.kind.kind)
            let (filter, progress, now) = (self.filter, ScanProgress(verb: "purged", output: options.output), Date())
            let filtered = filter.isFiltered
            let count: Int = try await context.withBroker { connection in
                // No filter: the whole queue at once (queue.purge), not one get per message.
                guard filtered else { return try await connection.purge(queue: queue) }
                return try await scanDeadLetters(connection, queue: queue, limit: filter.limit, scan: filter.scanBudget, progress: progress,
                                                 matches: { filter.matches($0, now: now) }) { _, _ in .take }.taken
            }
            if options.output == .json { printJSON(["purged": count, "queue": queue]) } else { print("purged \(count) message(s) from \(queue)") }
        }
    }
}
