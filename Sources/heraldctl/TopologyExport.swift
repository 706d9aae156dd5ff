import AMQP
import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime

extension Topology {
    /// `heraldctl topology export`: the topology as a RabbitMQ definitions file
    /// (`rabbitmqctl import_definitions`), plus a policy that carries the delivery limit.
    /// deploy/rabbitmq/definitions.json is this command's output for the shipped configuration.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the topology as RabbitMQ definitions JSON (for rabbitmqctl import_definitions).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "The vhost the definitions name.") var vhost = "/"

        func run() async throws {
            let context = try CLIContext.load(options)
            printJSON(Self.definitions(context.topology, namespace: context.configuration.amqp.namespace, deliveryLimit: context.configuration.amqp.deliveryLimit, vhost: vhost))
        }

        static func definitions(_ topology: HeraldTopology, namespace: String, deliveryLimit: Int, vhost: String) -> [String: Any] {
            let all = topology.all
            let exchanges: [[String: Any]] = all.exchanges.sorted { $0.name < $1.name }.map {
                ["name": $0.name, "vhost": vhost, "type": $0.type, "durable": $0.durable, "auto_delete": $0.autoDelete,
                 "internal": $0.internal, "arguments": json($0.arguments)]
            }
            let queues: [[String: Any]] = all.queues.sorted { $0.name < $1.name }.map {
                ["name": $0.name, "vhost": vhost, "durable": $0.durable, "auto_delete": $0.autoDelete, "arguments": json($0.arguments)]
            }
            let bindings: [[String: Any]] = all.bindings.sorted { ($0.exchange, $0.queue, $0.routingKey) < ($1.exchange, $1.queue, $1.routingKey) }.map {
                ["source": $0.exchange, "vhost": vhost, "destination": $0.queue, "destination_type": "queue",
                 "routing_key": $0.routingKey, "arguments": json($0.arguments)]
            }
            let kinds = JobKind.allCases.map(\.rawValue).joined(separator: "|")
            let escaped = NSRegularExpression.escapedPattern(for: namespace)
            let policies: [[String: Any]] = [[
                "name": "\(namespace)-delivery-limit", "vhost": vhost, "pattern": "^\(escaped)\\.(\(kinds))$",
                "apply-to": "queues", "priority": 0, "definition": ["delivery-limit": deliveryLimit],
            ]]
            return ["exchanges": exchanges, "queues": queues, "bindings": bindings, "policies": policies]
        }

        private static func json(_ table: AMQPTable) -> [String: Any] { table.mapValues(\.jsonValue) }
    }
}
