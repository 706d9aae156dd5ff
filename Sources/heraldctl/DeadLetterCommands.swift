import AMQP
import ArgumentParser
import Foundation
import HeraldCore

struct DeadLetters: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq", abstract: "Inspect, replay and purge dead-lettered jobs.",
        subcommands: [List.self, Replay.self, Purge.self])

    struct Filter: ParsableArguments {
        @Option(help: "Worker kind: sms, email, push or cleanup.") var kind: JobKindArgument
        @Option(help: "At most this many messages.") var limit = 100
        @Option(help: "Only messages whose reason contains this text.") var reason: String?
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List dead letters with their reasons (they stay in the queue).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var filter: Filter

        func run() async throws {
            let context = try CLIContext.load(options)
            let queue = context.topology.deadLetterQueue(filter.kind.kind)
            let (limit, reasonFilter) = (filter.limit, filter.reason)
            let letters: [DeadLetter] = try await context.withBroker { connection in
                var held: [AMQPDelivery] = []
                while held.count < limit, let delivery = try await connection.get(queue: queue) { held.append(delivery) }
                // Back where they were, in order.
                for delivery in held.reversed() { try await delivery.nack(requeue: true) }
                return held.map(DeadLetter.init).filter { reasonFilter == nil || $0.reason.contains(reasonFilter!) }
            }
            if options.output == .json {
                printJSON(letters.map(\.json))
            } else {
                if letters.isEmpty { print("no dead letters in \(queue)") }
                for letter in letters { print(letter.line) }
            }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put dead letters back on their work queue, with fresh attempts.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var filter: Filter

        func run() async throws {
            let context = try CLIContext.load(options)
            let topology = context.topology
            let kind = filter.kind.kind
            let queue = topology.deadLetterQueue(kind)
            let total = try await context.withBroker { try await $0.queueState(queue)?.messageCount ?? 0 }
            let target = min(total, filter.limit)
            let (reasonFilter, json) = (filter.reason, options.output == .json)
            let replayed = try await context.withDatabase { client in
                try await context.withBroker { connection in
                    let ledger = JobLedger(client: client, logger: context.logger)
                    var replayed = 0
                    var skipped: [AMQPDelivery] = []
                    for _ in 0..<target {
                        guard let delivery = try await connection.get(queue: queue) else { break }
                        let letter = DeadLetter(delivery)
                        if let reasonFilter, !letter.reason.contains(reasonFilter) {
                            skipped.append(delivery)
                            continue
                        }
                        if let id = delivery.properties.messageID { try await ledger.reopen(messageIDs: [id]) }
                        var properties = delivery.properties
                        properties.headers = properties.headers.filter { !$0.key.hasPrefix("x-herald-") && $0.key != "x-death" && !$0.key.hasPrefix("x-first-death") && !$0.key.hasPrefix("x-last-death") }
                        properties.headers["x-herald-replayed-at"] = .timestamp(Date())
                        try await connection.publish(body: delivery.body, exchange: topology.jobsExchange, routingKey: letter.routingKey(default: kind), properties: properties)
                        try await delivery.ack()
                        replayed += 1
                        if !json { FileHandle.standardError.write(Data("\rreplayed \(replayed)/\(target)".utf8)) }
                    }
                    for delivery in skipped.reversed() { try await delivery.nack(requeue: true) }
                    if !json { FileHandle.standardError.write(Data("\n".utf8)) }
                    return replayed
                }
            }
            if json { printJSON(["replayed": replayed, "queue": queue]) } else { print("replayed \(replayed) job(s) from \(queue)") }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete every dead letter of a kind.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Worker kind: sms, email, push or cleanup.") var kind: JobKindArgument
        @Flag(help: "Required: this cannot be undone.") var yes = false

        func run() async throws {
            guard yes else { throw CLIExit.fail("purge deletes dead letters for good; add --yes", code: .usage) }
            let context = try CLIContext.load(options)
            let queue = context.topology.deadLetterQueue(kind.kind)
            let count = try await context.withBroker { try await $0.purge(queue: queue) }
            if options.output == .json { printJSON(["purged": count, "queue": queue]) } else { print("purged \(count) message(s) from \(queue)") }
        }
    }
}

/// `--kind sms`
struct JobKindArgument: ExpressibleByArgument, Sendable {
    let kind: JobKind
    init?(argument: String) {
        guard let kind = JobKind(rawValue: argument) else { return nil }
        self.kind = kind
    }
}

/// A dead-lettered message as the CLI shows it.
struct DeadLetter {
    var messageID: String
    var type: String
    var reason: String
    var category: String
    var attempts: Int64
    var originalRoutingKey: String?
    var deadLetteredAt: Date?
    var bytes: Int

    init(_ delivery: AMQPDelivery) {
        let headers = delivery.properties.headers
        func string(_ key: String) -> String? { if case .string(let s)? = headers[key] { return s }; return nil }
        messageID = delivery.properties.messageID ?? "-"
        type = delivery.properties.type ?? "-"
        // Broker-side dead-lettering (delivery limit) carries x-first-death-reason instead.
        reason = string("x-herald-reason") ?? string("x-first-death-reason").map { "broker: \($0)" } ?? "unknown"
        category = string("x-herald-category") ?? "broker"
        if case .int(let n)? = headers["x-herald-attempts"] { attempts = n } else { attempts = 0 }
        originalRoutingKey = string("x-herald-routing-key")
        if originalRoutingKey == nil, case .array(let deaths)? = headers["x-death"], case .table(let first)? = deaths.first,
           case .array(let keys)? = first["routing-keys"], case .string(let key)? = keys.first {
            originalRoutingKey = key
        }
        if case .timestamp(let date)? = headers["x-herald-dead-lettered-at"] { deadLetteredAt = date }
        bytes = delivery.body.count
    }

    func routingKey(default kind: JobKind) -> String {
        originalRoutingKey ?? kind.jobTypes.first!.name
    }

    var json: [String: Any] {
        ["message_id": messageID, "type": type, "reason": reason, "category": category, "attempts": attempts,
         "routing_key": originalRoutingKey ?? "", "bytes": bytes,
         "dead_lettered_at": deadLetteredAt.map { $0.iso8601 } ?? ""]
    }

    var line: String {
        "\(messageID)  \(type)  [\(category), \(attempts) attempts]  \(reason)"
    }
}
